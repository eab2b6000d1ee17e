// What the search algorithm learns from evaluating one candidate.
//
// The search-facing view of an Evaluation (protocol/evaluation.hpp): enough to judge the
// candidate and to write the feedback the LLM sees next. stdout/stderr, per-stage times and
// error magnitudes go to the store, not here.

#ifndef PALLADIUM_SEARCH_EVAL_OUTCOME_HPP_
#define PALLADIUM_SEARCH_EVAL_OUTCOME_HPP_

#include <optional>
#include <string>

#include "protocol/evaluation.hpp"
#include "search/verdict.hpp"

namespace palladium {

struct EvalOutcome {
  Verdict verdict = Verdict::no_code;
  std::string stage;            // last stage reached, e.g. "numerics"; "" if none
  std::string error;            // raw error text (may be long)
  std::string error_signature;  // normalised, for grouping
  std::optional<double> kernel_ms;
  std::optional<double> baseline_ms;
  std::string timing_kind;  // "cpu-wall", "tpu-profiler" or "tpu-wall-fallback"; "" if untimed

  static EvalOutcome from(const Evaluation& e) {
    EvalOutcome o;
    o.verdict = e.verdict;
    o.stage = spelling(e.stage);
    o.error = e.error;
    o.error_signature = e.error_signature;
    o.kernel_ms = e.kernel_ms;
    o.baseline_ms = e.baseline_ms;
    o.timing_kind = spelling(e.timing_kind);
    return o;
  }

  // baseline_ms / kernel_ms when the verdict is correct and both times are
  // present and positive; nullopt otherwise. Above 1.0 means faster than XLA.
  std::optional<double> speedup() const {
    if (verdict != Verdict::correct || !kernel_ms || !baseline_ms) {
      return std::nullopt;
    }
    if (!(*kernel_ms > 0.0) || !(*baseline_ms > 0.0)) return std::nullopt;
    return *baseline_ms / *kernel_ms;
  }
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_EVAL_OUTCOME_HPP_
