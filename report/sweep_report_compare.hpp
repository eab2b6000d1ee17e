// Paired comparisons of two conditions of a sweep (analysis/paired_comparison.hpp)
// as the sweep report and `palladium compare` state them.
//
// JSON of one comparison (every key always present):
//   {"a", "b", "axis", "timing", "model_a", "model_b", "workloads", "seeds_a", "seeds_b", "paired", "few_seeds",
//    "resamples", "level",
//    "per_sample_correctness" | "solved" | "geomean_speedup" | "iqm_speedup":
//        {"a", "b", "diff", "low", "high"},
//    "p_improvement": {"value", "low", "high"},
//    "reading", "warning"}
// "reading" is one sentence ("A is ahead of B on speed by 0.08x [-0.02, 0.19],
// P(A>B) = 0.91; ..."); "warning" is empty, or says the interval rests on
// fewer than kFewSeeds seeds, or that the runs are unpaired.
//
// Errors: find_condition throws std::invalid_argument naming the spec and
// the conditions there are; paired_comparison_json throws it for conditions
// of different timing kinds (never compared) or without evaluated candidates.

#ifndef PALLADIUM_STORE_SWEEP_REPORT_COMPARE_HPP_
#define PALLADIUM_STORE_SWEEP_REPORT_COMPARE_HPP_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/sweep_report.hpp"

namespace palladium {

// The condition a CELLSPEC names: comma-separated axis=label pairs (the seed
// axis is ignored), each of which the condition's params must hold; "method=M"
// also matches a condition's method, and a condition's whole key matches
// itself. Exactly one condition must match.
const ReportCondition& find_condition(const std::vector<ReportCondition>& conditions,
                                      const std::string& spec);

// A - B. `axis` names what differs ("method"; empty for a pair the user chose).
nlohmann::ordered_json paired_comparison_json(const ReportCondition& a, const ReportCondition& b,
                                              const std::string& axis, int resamples = 2000);

// The pairs of conditions that differ in exactly one non-seed axis, compared
// later value against earlier one (A = the condition that appears later).
nlohmann::ordered_json axis_comparisons(const std::vector<ReportCondition>& conditions);

// Text for people: the reading, the warning and a table of the four metrics.
std::string comparison_text(const nlohmann::ordered_json& comparison);

// What the comparisons' columns mean.
extern const char* const kComparisonDefinitions;

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEP_REPORT_COMPARE_HPP_
