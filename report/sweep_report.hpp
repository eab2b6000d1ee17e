// The sweep report: Table 2, Table 3, Figure 4, budget curves, cells, best
// kernels, compared across the cells of a sweep (or the runs of a database),
// as one JSON document from which the Markdown and CSV files (and, through
// scripts/plot_report.py, the PNG figures) are rendered.
//
// Input is plain data (SweepReportInput), filled from a store by
// collect_report_input() (report/report_input.hpp), so every
// number here is a pure function of stored rows.
//
// Conditions. Cells that differ only by their seed axis are one condition;
// its seeds come from the candidates' seed column, so a cell with several
// seeds and several one-seed cells give the same numbers. Per seed, the
// study's metrics (analysis/metrics.hpp) over the cell's whole suite; a
// condition reports their mean over seeds with a 95% percentile-bootstrap
// interval over seeds (analysis/bootstrap.hpp), and the pooled per-sample
// correctness. Only evaluated candidates count (as in run_report.hpp).
//
// Timing. A condition's timing kind is decided by its timed candidates only
// (those with a kernel time): cpu-wall if any is, tpu-profiler if all are,
// else tpu-wall-fallback; cpu-wall when none is timed. Conditions are
// grouped by timing kind and nothing compares across groups: a report
// never mixes timing kinds, and cpu-wall speedups are labelled as CPU
// interpret-mode ratios, never as TPU speedups.
//
// Budget curves. For k = 1 .. the longest recording, the metrics of the
// first k candidates of every workload (analysis/policy_replay.hpp prefix:k),
// per seed, then mean and interval over seeds.
//
// Table 3. The priority workloads (those with a hand-tuned reference in
// workloads/catalog.json) in each condition's suite: speedup(w) as mean over
// seeds, the suite speedup over that subset, and the % of the hand-tuned
// suite speedup over the same subset. The hand-tuned speedups are the
// references' own evaluations on the same agents (a reference that is not
// correct there, or timed with another kind, counts as 1.0x and is named).
//
// JSON shape (every key always present):
//   {"title", "definitions", "models": [..], "timings": [..],
//    "groups": [{"timing", "model", "suffix",
//      "conditions": [{"key", "label", "method", "model", "params", "cells", "seeds",
//        "table2": {"candidates", "correct", "workloads", "pooled_per_sample_correctness",
//                   "per_sample_correctness": MI, "solved": MI, "geomean_speedup": MI,
//                   "iqm_speedup": E},
//        "pass_at_k": [{"k", "estimate": E}], "fast_p": [{"p", "estimate": E}],
//        "outcomes": {verdict: count}, "curve": [{"samples_per_workload", "solved": MI,
//                                                 "geomean_speedup": MI}]}],
//      "comparisons": [see report/sweep_report_compare.hpp],
//      "table3": {"workloads", "hand_tuned": {w: x}, "hand_tuned_suite", "hand_tuned_ran",
//                 "hand_tuned_verdicts": {w: verdict}, "rows": [{"key", "label",
//                 "speedups": {w: x}, "suite", "hand_tuned_suite", "percent_of_hand_tuned"}],
//                 "note"}}],
//    "cells": [{"key", "ordinal", "params", "run_id", "status", "status_reason", "method", "planned",
//               "model", "timing", "seeds", "candidates", "pending", "correct", "solved",
//               "workloads", "geomean_speedup", "sittings": {"published", "unsettled"},
//               "llm": {"calls", "prompt_tokens",
//               "completion_tokens", "thinking_tokens", "cost_usd", "cost_complete",
//               "cached_prompt_tokens", "cache_saved_usd", "paid": {"prompt_tokens",
//               "output_tokens", "usd"}, "reused": {same}, "alone_usd", "truncated"},
//               "per_workload": [{"id", "candidates", "correct", "best_speedup", "verdicts"}]}],
//    "suspect_timings": [{"candidate_id", "workload", "cell", "timing", "speedup", "kernel_ms",
//                         "plausibility", "reason", "retiming"}],
//    "quarantined_keys": [{"run_id", "agent_key", "agent_id", "reason", "job_id",
//                          "evaluations"}],
//    "workloads": [{"id", "degenerate", "insensitive_inputs",
//                   "best": [{"timing", "candidate_id", "cell", "model", "seed",
//                             "sample_index", "speedup", "kernel_ms", "baseline_ms",
//                             "roofline": null | {"fraction", "baseline_fraction", "bound",
//                                                 "floor_ms", "peaks", "meaningful"},
//                             "timing_runs", "kernel_ms_band": null | [low, high],
//                             "plausibility", "runner_up": null | {"candidate_id", "speedup",
//                               "kernel_ms", "kernel_ms_band", "bands_overlap": null | bool},
//                             "sitting": null | {"evaluated_speedup", "unsettled"},
//                             "file", "history"}]}]}
// ("best" holds one entry per timing group with a correct, timed candidate.)
// where MI = {"mean", "low", "high", "n"} and E = {"value", "low", "high"}.
//
// pass@k, fast_p and the IQM (analysis/score_grid.hpp) are over the condition's
// (workload, seed) runs with 95% stratified bootstrap intervals
// (analysis/paired_comparison.hpp); pass@k is listed only for the k every run
// allows. "comparisons" pairs the conditions of a group that differ in exactly
// one non-seed axis. "hand_tuned_ran" is false when no hand-tuned reference has
// a comparable time; percent_of_hand_tuned is then null. "roofline" is the
// share of TPU v6e's roofline (search/roofline.hpp) from workloads' costs;
// "meaningful" is false for cpu-wall times, which reports keep out of headlines.
//
// "suspect_timings" lists, for a person to look at, every correct candidate the
// judge flagged implausible_speed or re-timed, and every one the report's own
// check (search/plausibility.hpp, default ceiling) finds suspect. A best
// kernel's runner-up is the next-fastest correct candidate of its workload and
// timing kind; "bands_overlap" says whether their interquartile bands of
// kernel time overlap (null when either was timed once): the ranking of two
// overlapping kernels is not settled.
//
// Sittings. A search (workload and seed of a cell) whose best two kernels were re-timed side
// by side publishes the faster of that sitting at its speedup there, by the run report's rule
// (report/sweep_report_sittings.hpp): every figure above reads it. Such a best kernel's runner-up
// is its partner in the sitting; a cell's "sittings" counts its searches published so and the
// unsettled ones (the two bands overlap).
//
// Errors: none for any input (empty cells give empty groups).

#ifndef PALLADIUM_STORE_SWEEP_REPORT_HPP_
#define PALLADIUM_STORE_SWEEP_REPORT_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/trajectory.hpp"
#include "search/verdict.hpp"
#include "report/run_report.hpp"
#include "report/sweep_report_costs.hpp"

namespace palladium {

struct ReportCandidate {
  int64_t id = 0;
  std::string workload;
  int64_t seed = 0;
  int sample_index = 0;
  std::optional<Verdict> verdict;  // nullopt: not evaluated yet
  std::optional<double> speedup;   // correct and timed only
  std::optional<double> kernel_ms;
  std::optional<double> baseline_ms;
  std::string timing_kind;
  // The spread of a repeated timing (interquartile band of kernel_ms; unset: timed once).
  int timing_runs = 1;
  std::optional<double> kernel_ms_low, kernel_ms_high;
  std::string plausibility;        // "", "plausible", "retimed", "implausible_speed"
  std::string retiming_json = "{}";  // both timings of a re-timed candidate
  // Read from its search's sitting (report/sweep_report_sittings.hpp): speedup, kernel_ms, its
  // band and baseline_ms are then the sitting's, and evaluated_speedup the evaluation's.
  enum class Sitting { none, published, runner_up };
  Sitting sitting = Sitting::none;
  bool sitting_unsettled = false;  // the sitting's two bands overlap
  std::optional<double> evaluated_speedup;
};

struct ReportUsage {
  int64_t calls = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  double cost_usd = 0.0;
  bool cost_complete = true;  // every call had a price
  // Who paid (report/llm_usage_report.hpp): answers this cell's calls fetched, and answers it
  // reused from the response cache, charged to the cell that first paid for them.
  int64_t cached_prompt_tokens = 0;       // of prompt_tokens, from the provider's prompt cache
  std::optional<double> cache_saved_usd;  // unset: no call had a price
  int64_t paid_prompt_tokens = 0, paid_output_tokens = 0;
  int64_t reused_prompt_tokens = 0, reused_output_tokens = 0;
  double paid_usd = 0, reused_usd = 0;
  int64_t truncated = 0;  // answers cut off at the output limit
};

struct ReportCell {
  std::string key;
  int ordinal = 0;
  std::vector<std::pair<std::string, std::string>> params;  // axis -> label
  std::optional<int64_t> run_id;  // none: the cell has not started
  std::string status = "pending";
  std::string status_reason;
  std::string method;
  std::string model;  // "synthetic", "replay", or the API model asked for
  std::vector<std::string> suite;
  int64_t planned = 0;  // candidates its config may spend: budget x workloads x seeds
  std::vector<ReportCandidate> candidates;  // live candidates, by id
  ReportUsage usage;
  // Its run's side-by-side re-timings, until with_published_bests reads them into the
  // candidates and counts the searches whose best they published (and the unsettled ones).
  std::vector<SittingRecord> sittings;
  int sitting_bests = 0, sitting_unsettled = 0;
};

// A key the dispatcher quarantined (store quarantined_keys), as the report lists it.
struct ReportQuarantine {
  int64_t run_id = 0;
  std::string agent_key;  // "" on a plaintext link
  std::string agent_id;
  std::string reason;
  int64_t job_id = 0;       // the candidate on which it was caught
  int64_t evaluations = 0;  // evaluations in the database sent by this key
};

struct SweepReportInput {
  std::string title;
  std::vector<ReportCell> cells;
  // Quarantined keys. Their evaluations are marked for re-evaluation and read as not evaluated
  // (pending) until a resumed run replaces them.
  std::vector<ReportQuarantine> quarantines;
  // Priority workload -> its hand-tuned reference's evaluation here.
  std::map<std::string, ReportCandidate> hand_tuned;
  InputSensitivity sensitivity;
  WorkloadCosts costs;  // for roofline fractions; empty: none shown
};

// Cells that differ only by their seed axis, as one condition.
struct ReportCondition {
  std::string key;    // the cell key without its seed axis ("all" when nothing else varies)
  std::string label;  // key, or "method=M" for "all"
  std::string method;
  std::string model;  // "mixed" if its cells differ
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<const ReportCell*> cells;  // into the input
  std::vector<std::string> suite;        // its first cell's
  std::vector<const ReportCandidate*> evaluated;
  std::string timing;  // decided by its timed candidates (see above)
};

// The conditions of `input`, in the order their first cell appears. They
// point into `input`, which must outlive them.
std::vector<ReportCondition> report_conditions(const SweepReportInput& input);

// A condition's evaluated candidates per seed, in issue order per workload:
// what budget curves and policy replay read.
std::vector<SeedTrajectories> condition_trajectories(const ReportCondition& condition);

// The metric definitions every rendering states.
extern const char* const kSweepMetricDefinitions;

nlohmann::ordered_json sweep_report_json(const SweepReportInput& input);

// The Markdown report; links the PNGs and CSVs by their file names.
std::string sweep_report_markdown(const nlohmann::ordered_json& report);

// CSV files by name: table2.csv, table3.csv, figure4.csv, budget_curves.csv, pass_at_k.csv,
// fast_p.csv, comparisons.csv,
// cells.csv. Each row carries its timing kind and model.
std::map<std::string, std::string> sweep_report_csv(const nlohmann::ordered_json& report);

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEP_REPORT_HPP_
