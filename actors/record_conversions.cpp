#include "actors/record_conversions.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace palladium {

EvaluationRecord record_from_result(int64_t candidate_id, const wire::Result& r) {
  EvaluationRecord e;
  e.candidate_id = candidate_id;
  if (auto v = verdict_from_string(r.verdict)) {
    e.verdict = *v;
    e.error_text = r.error;
    e.error_signature = r.error_signature;
  } else {
    e.verdict = Verdict::crash;
    e.error_text = "agent " + r.agent_id + " sent unknown verdict '" + r.verdict + "'\n" + r.error;
    e.error_signature = "unknown verdict";
  }
  e.stage = r.stage;
  e.stdout_text = r.stdout_text;
  e.stderr_text = r.stderr_text;
  e.stage_ms_json = nlohmann::json(r.stage_ms).dump();
  e.max_abs_err = r.max_abs_err;
  e.max_rel_err = r.max_rel_err;
  e.kernel_ms = r.kernel_ms;
  e.baseline_ms = r.baseline_ms;
  e.timing_kind = r.timing_kind;
  e.agent_id = r.agent_id;
  e.backend = r.backend;
  e.device_kind = r.device_kind;
  e.jax_version = r.jax_version;
  e.libtpu_version = r.libtpu_version;
  e.attempts = std::max(1, r.dispatches);  // set by the dispatcher; 0 from anywhere else
  e.input_seeds = r.seeds;
  e.outside_pallas_flops_share = r.outside_pallas_fraction;
  e.numerics_path = r.numerics_path;
  e.agent_key = r.agent_key;
  e.plausibility = r.plausibility;
  e.retiming_json = r.retiming_json;
  e.cross_check_json = r.cross_check_json;
  e.speedup = outcome_from_record(e).speedup();
  return e;
}

EvalOutcome outcome_from_record(const EvaluationRecord& e) {
  EvalOutcome o;
  o.verdict = e.verdict;
  o.stage = e.stage;
  o.error = e.error_text;
  o.error_signature = e.error_signature;
  o.kernel_ms = e.kernel_ms;
  o.baseline_ms = e.baseline_ms;
  o.timing_kind = e.timing_kind;
  return o;
}

}  // namespace palladium
