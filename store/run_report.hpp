// The run report: per-workload results and suite metrics of one run, as
// JSON (for tools) and as text (for people).
//
// Metrics are those of search/metrics.hpp, exactly as DESIGN.md defines
// them. Only evaluated candidates count; candidates still waiting for an
// evaluation are left out (report_text says how many). All methods and seeds
// of the run are pooled.
//
// JSON shape:
//   {"run": {"id", "name", "status"},
//    "suite": {"workloads", "candidates", "correct",
//              "per_sample_correctness", "solved", "geomean_speedup",
//              "timing"},
//    "workloads": [{"id", "candidates", "correct", "best_speedup",
//                   "verdicts": {VERDICT: COUNT}}]}
//
// "timing" is "tpu-profiler" only when every evaluation of the run that has
// a timing kind says "tpu-profiler" (and at least one does); otherwise
// "cpu-wall", so CPU wall-clock numbers are never presented as TPU speedups.
//
// `workload_ids` is the suite (from the run config), in report order;
// workloads with no candidates still count, with speedup 1.0. If empty, the
// distinct workloads of the run's candidates are used, in order of first
// appearance.
//
// Both functions throw StoreError if the run does not exist.

#ifndef PALLADIUM_STORE_RUN_REPORT_HPP_
#define PALLADIUM_STORE_RUN_REPORT_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/run_store.hpp"

namespace palladium {

nlohmann::json report_json(const RunStore& store, int64_t run_id,
                           const std::vector<std::string>& workload_ids);

// A per-workload table, the suite lines, a one-line statement of the
// metric definitions and, for cpu-wall timing, a line saying the speedups
// are CPU interpret-mode wall-clock ratios and NOT TPU speedups.
std::string report_text(const RunStore& store, int64_t run_id,
                        const std::vector<std::string>& workload_ids);

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_REPORT_HPP_
