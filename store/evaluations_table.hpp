// The evaluations table: the judge's verdict on one candidate. The evaluation's own columns are
// protocol/judge_pipe.json's (its generated visit_fields()); the rest are listed here.

#ifndef PALLADIUM_STORE_EVALUATIONS_TABLE_HPP_
#define PALLADIUM_STORE_EVALUATIONS_TABLE_HPP_

#include <cstdint>
#include <string>

#include "protocol/evaluation.hpp"
#include "store/columns.hpp"

namespace palladium {

// Fields marked "store" are filled in by the store and ignored on writes.
// One evaluations row: the candidate, what the judge found (Evaluation, whose fields and columns
// protocol/judge_pipe.json lists), the agent that found it (AgentFacts) and what the
// coordinator's checks concluded (CheckFindings), plus what the store adds.
struct EvaluationRecord {
  int64_t id = 0;  // store
  int64_t candidate_id = 0;  // a code or repair sample
  Evaluation evaluation;
  AgentFacts agent;
  // baseline_ms / kernel_ms for a correct candidate (speedup(Evaluation)): computed when the row
  // is written; the report reads this column as is.
  std::optional<double> speedup;
  std::string structure_json = "{}";  // further structural figures
  // The dispatcher's result checks: plausibility, re-timing, cross-check.
  CheckFindings checks;
  std::string created_at;  // store
  // Whether its key was quarantined since (then a resumed run evaluates the candidate again).
  // The store sets it itself from quarantined_keys; the writer's value is ignored.
  bool needs_reevaluation = false;
};

template <>
struct Table<EvaluationRecord> {
  static constexpr TableSpec spec{"evaluations", "e", "evaluation"};
  // Columns added after databases were written without them read, in such a database opened
  // read-only (never migrated), as the value a row from before them means; the evaluation's
  // own columns read as NULL, the field's default.
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"candidate_id"}, r.candidate_id);
    f(ColumnSpec{"speedup"}, r.speedup);
    f(ColumnSpec{"agent_id"}, r.agent.agent_id);
    f(ColumnSpec{"agent_key"}, r.agent.agent_key);
    f(ColumnSpec{"backend"}, r.agent.backend);
    f(ColumnSpec{"device_kind"}, r.agent.device_kind);
    f(ColumnSpec{"jax_version"}, r.agent.jax_version);
    f(ColumnSpec{"libtpu_version"}, r.agent.libtpu_version);
    f(ColumnSpec{"attempts"}, r.agent.dispatches);
    f(ColumnSpec{"structure_json"}, r.structure_json);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"plausibility", ColumnKind::field, {}, "''"}, r.checks.plausibility);
    f(ColumnSpec{"retiming_json", ColumnKind::field, {}, "'{}'"}, r.checks.retiming_json);
    f(ColumnSpec{"cross_check_json", ColumnKind::field, {}, "'{}'"}, r.checks.cross_check_json);
    // Written by the INSERT itself, from the quarantined keys (store/evaluations_table.cpp).
    f(ColumnSpec{"needs_reevaluation", ColumnKind::store, {}, "0"}, r.needs_reevaluation);
    visit_fields(r.evaluation, [&](const FieldSpec& field, auto& value) {
      f(ColumnSpec{field.column}, value);
    });
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_EVALUATIONS_TABLE_HPP_
