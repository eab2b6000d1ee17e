// One evaluation of one candidate, as every process and the store see it.
//
// `Evaluation` itself is generated from protocol/judge_pipe.json ("records": "evaluation"): the
// judge fills it, the judge pipe and the wire's RESULT frame carry it (protocol/field_codec.hpp),
// search observes it (EvalOutcome::from) and the store writes it as one evaluations row
// (RunStore::put_evaluation). Its verdict, stage, timing kind and numerics path are the enums of
// protocol/taxonomy.json, decoded from their spellings once, when a frame is read.
//
// What is not the judge's finding stays beside the evaluation, never inside it: AgentFacts (who
// evaluated, on what, after how many dispatches) come from the coordinator's dispatcher, which
// knows the answering agent by its CURVE key, not from anything the agent claims per result;
// CheckFindings are what the dispatcher's result checks (actors/result_check.hpp) concluded
// about the evaluation. `Evaluated` is the three together: a job's answer inside the
// coordinator, and what the store writes as one evaluations row.

#ifndef PALLADIUM_PROTOCOL_EVALUATION_HPP_
#define PALLADIUM_PROTOCOL_EVALUATION_HPP_

#include <optional>
#include <string>

#include "protocol/judge_pipe.hpp"

namespace palladium {

// How the judge is to check a candidate: the run config's evaluation.compile_tier and
// evaluation.full_shapes (config/evaluation_config.hpp), carried by every job
// (wire::Job) and the judge pipe's `eval`, so that a run's stored config says how it was judged.
// A judge host's environment may override them (PALLADIUM_COMPILE_TIER, PALLADIUM_FULL_SHAPES):
// its ready frame lists the overrides, and each evaluation records the settings it was
// judged under (Evaluation::judge_settings).
struct JudgeSettings {
  // "on": the deviceless libtpu v6e compile runs where the judge can (an interpret-backend
  // host with libtpu; a TPU's native compile covers it); "off": it does not.
  std::string compile_tier = "on";
  // The interpret backend also computes the full-shape program a TPU would run, on a secret
  // seed (10 s to minutes per passing candidate); a TPU's numerics are at the full shapes.
  bool full_shapes = false;
};

// The agent behind one evaluation, from its admitted HELLO and the dispatcher's bookkeeping.
struct AgentFacts {
  std::string agent_key;  // the agent's CURVE public key id (Z85); "" on a plaintext link
  std::string agent_id;   // the agent's display name (its own choice: never an identity)
  std::string backend;    // "interpret" or "tpu"
  std::string device_kind;
  std::string jax_version;
  std::string libtpu_version;  // "" when the agent has none
  int dispatches = 1;          // dispatches the job took (lost leases + 1, and a cascade's tier)
};

// The coordinator's own findings about an evaluation (actors/result_check.hpp), never the
// judge's: stored in the evaluations columns of the same names.
struct CheckFindings {
  // The plausibility gate (search/plausibility.hpp): "" not checked, "plausible", "retimed" or
  // "implausible_speed".
  std::string plausibility;
  // Both timings of a re-timed result: {"first": {...}, "second": {...}, "reason": "..."}.
  std::string retiming_json = "{}";
  // Who else evaluated the job and whether they agreed; "{}" when it was not checked.
  std::string cross_check_json = "{}";
};

// One job's answer: what the judge found, the agent that found it, and what the coordinator's
// checks concluded about it.
struct Evaluated {
  Evaluation evaluation;
  AgentFacts agent;
  CheckFindings checks;
  // The answer to a side-by-side re-timing job (wire::Job::codes not empty): the sitting; then
  // `evaluation` is left empty.
  std::optional<judge_pipe::Retimed> sitting;
};

// baseline_ms / kernel_ms when the verdict is correct and both times are present and positive;
// nullopt otherwise. Above 1.0 means faster than XLA.
inline std::optional<double> speedup(const Evaluation& e) {
  if (e.verdict != Verdict::correct || !e.kernel_ms || !e.baseline_ms) return std::nullopt;
  if (!(*e.kernel_ms > 0.0) || !(*e.baseline_ms > 0.0)) return std::nullopt;
  return *e.baseline_ms / *e.kernel_ms;
}

// An optional enum's spelling, or "" when absent: the store's and the prompts' spelling.
template <typename E>
std::string spelling(const std::optional<E>& value) {
  return value ? std::string(to_string(*value)) : std::string();
}

}  // namespace palladium

#endif  // PALLADIUM_PROTOCOL_EVALUATION_HPP_
