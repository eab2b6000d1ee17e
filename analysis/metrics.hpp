// Suite metrics, exactly as DESIGN.md defines them:
//
//   per-sample correctness = correct candidates / all generated candidates
//     (a response with no extractable code counts as generated and wrong)
//   solved       = workloads with >= 1 correct candidate
//   speedup(w)   = baseline_time / best_correct_time, and 1.0 when none is
//                  correct
//   suite speedup = geomean over all workloads of max(speedup(w), 1.0)
//                  (XLA is always available as the fallback)
//
// Pure functions over plain rows; no IO.

#ifndef PALLADIUM_SEARCH_METRICS_HPP_
#define PALLADIUM_SEARCH_METRICS_HPP_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/verdict.hpp"

namespace palladium {

// One evaluated candidate.
struct CandidateResult {
  std::string workload;
  Verdict verdict = Verdict::no_code;
  // baseline / kernel time; only read when verdict == correct.
  std::optional<double> speedup;
};

struct WorkloadSummary {
  std::string id;
  int candidates = 0;
  int correct = 0;
  // speedup(w): the best speedup among correct candidates that have one;
  // 1.0 when no correct candidate has a speedup. May be below 1.0 (a
  // correct kernel slower than XLA); the suite clips, this does not.
  double best_speedup = 1.0;
  std::map<std::string, int> verdicts;  // verdict spelling -> count (> 0)
};

struct SuiteSummary {
  int workloads = 0;
  int candidates = 0;
  int correct = 0;
  double per_sample_correctness = 0.0;  // correct / candidates; 0 if none
  int solved = 0;
  double geomean_speedup = 1.0;  // 1.0 for an empty suite
};

// One summary per id of `workload_ids`, in that order; workloads with no
// candidates appear with zero counts and best_speedup 1.0. Candidates of
// workloads not in the list are ignored (this is how a subset, such as the
// priority operators, is reported). Throws std::invalid_argument on a
// duplicate id.
std::vector<WorkloadSummary> summarize_workloads(
    const std::vector<std::string>& workload_ids,
    const std::vector<CandidateResult>& results);

// Suite totals over the given workload summaries.
SuiteSummary summarize_suite(const std::vector<WorkloadSummary>& workloads);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_METRICS_HPP_
