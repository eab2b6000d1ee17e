// The run report: per-workload results and suite metrics of one run, as
// JSON (for tools) and as text (for people).
//
// Metrics are those of analysis/metrics.hpp, exactly as the JAXBench study
// defines them (README.md, Metrics). Only evaluated candidates count; candidates still waiting for an
// evaluation are left out (report_text says how many). All methods and seeds
// of the run are pooled.
//
// JSON shape:
//   {"run": {"id", "name", "status", "models"},
//    "suite": {"workloads", "candidates", "correct",
//              "per_sample_correctness", "solved", "geomean_speedup",
//              "timing", "degenerate_workloads",
//              "pass_at_k": {"1" | "5" | "10": x or null}, "fast_p": {"0" | "1.0" | ...: x}},
//    "workloads": [{"id", "candidates", "correct", "best_speedup",
//                   "verdicts": {VERDICT: COUNT}, "degenerate",
//                   "insensitive_inputs",
//                   "phases": {PHASE: {"candidates", "correct", "best_speedup",
//                                      "best_kernel_ms"}}}],
//    "llm": see report/llm_usage_report.hpp (cache hit share and savings, paid vs reused
//           answers, cut-off answers per workload)}
//
// "models" lists the models that answered the run's LLM calls (llm_calls.model);
// the text report names the offline ones for what they are (model: synthetic is
// the offline synthetic model, never an LLM).
//
// "timing" is decided by the timed evaluations only (those with a kernel
// time): "tpu-profiler" only when every one says "tpu-profiler" (and at
// least one exists); "cpu-wall" when
// any says "cpu-wall" or none is timed, so CPU wall-clock numbers are never
// presented as TPU speedups; "tpu-wall-fallback" otherwise.
//
// "phases" is there only for a workload whose candidates carry a search phase
// other than "iterate" (Autocomp's translate and optimise): what each phase
// evaluated, how many were correct, and the best correct speedup and kernel
// time (null when none was correct), so a report shows what optimising added
// over the translated seeds. The text report prints it as a second table.
//
// "degenerate" marks workloads whose reference ignores an input (the audit of
// docs/verification.md §3): a correct kernel there may just constant-fold, so
// its speedup means nothing. The flags come from `sensitivity`; a workload it
// does not list is reported as not degenerate.
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
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/run_store.hpp"

namespace palladium {

// Workload id -> the inputs its reference ignores (empty: not degenerate).
using InputSensitivity = std::map<std::string, std::vector<std::string>>;

// Reads workloads/input_sensitivity.json (written by scripts/audit_workloads.py).
// A missing file gives an empty table; a malformed one throws StoreError
// naming the file.
InputSensitivity load_input_sensitivity(const std::filesystem::path& path);

nlohmann::json report_json(const RunStore& store, int64_t run_id,
                           const std::vector<std::string>& workload_ids,
                           const InputSensitivity& sensitivity = {});

// A per-workload table, the suite lines, a one-line statement of the
// metric definitions and, for cpu-wall timing, a line saying the speedups
// are CPU interpret-mode wall-clock ratios and NOT TPU speedups; degenerate
// workloads are starred and explained under the table.
std::string report_text(const RunStore& store, int64_t run_id,
                        const std::vector<std::string>& workload_ids,
                        const InputSensitivity& sensitivity = {});

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_REPORT_HPP_
