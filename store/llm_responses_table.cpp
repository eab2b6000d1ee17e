#include "store/column_sql.hpp"
#include "store/run_store.hpp"

namespace palladium {

std::vector<LlmAttribution> RunStore::llm_attribution(int64_t run_id) const {
  // A sample's answer was paid by this run when the call that fetched it belongs to the run.
  sqlite::CachedUse st(
      db_->db(),
      "SELECT s.workload, COUNT(*), "
      "SUM(c.run_id IS ?1), SUM(c.run_id IS NOT ?1), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.prompt_tokens ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.completion_tokens + r.thinking_tokens ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE r.prompt_tokens END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE r.completion_tokens + r.thinking_tokens END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN COALESCE(r.cost_usd, 0) ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE COALESCE(r.cost_usd, 0) END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.cached_prompt_tokens ELSE 0 END), "
      "SUM(r.finish_reason IN ('length', 'MAX_TOKENS')) "
      "FROM samples s JOIN llm_responses r ON r.id = s.response_id "
      "LEFT JOIN llm_calls c ON c.id = r.call_id "
      "WHERE s.run_id = ?1 AND s.superseded = 0 GROUP BY s.workload ORDER BY s.workload");
  st->bind_int64(1, run_id);
  std::vector<LlmAttribution> out;
  while (st->step()) {
    LlmAttribution a;
    a.workload = st->text(0);
    a.answers = st->int64(1);
    a.paid_answers = st->int64(2);
    a.reused_answers = st->int64(3);
    a.paid_prompt_tokens = st->int64(4);
    a.paid_output_tokens = st->int64(5);
    a.reused_prompt_tokens = st->int64(6);
    a.reused_output_tokens = st->int64(7);
    a.paid_usd = st->real(8);
    a.reused_usd = st->real(9);
    a.cached_prompt_tokens = st->int64(10);
    a.truncated = st->int64(11);
    out.push_back(std::move(a));
  }
  return out;
}

PutResponseResult RunStore::put_response(const LlmResponseRecord& r) {
  store::WriteScope w(*db_, "put_response");
  const ResponseKey k = r.key();
  {
    sqlite::CachedUse found(db_->db(),
                            "SELECT id FROM llm_responses WHERE provider = ?1 AND model = ?2 AND "
                            "prompt_hash = ?3 AND params_hash = ?4 AND sample_index = ?5 AND "
                            "seed = ?6");
    found->bind_text(1, k.provider)
        .bind_text(2, k.model)
        .bind_text(3, k.prompt_hash)
        .bind_text(4, k.params_hash)
        .bind_int64(5, k.sample_index)
        .bind_int64(6, k.seed);
    if (found->step()) return {found->int64(0), false};
  }
  LlmResponseRecord row = r;
  row.prompt_hash = k.prompt_hash;
  row.params_hash = k.params_hash;
  try {
    static const std::string sql = store::insert_sql<LlmResponseRecord>();
    sqlite::CachedUse st(db_->db(), sql.c_str());
    store::bind_row(*db_, *st, row);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError("put_response (" + r.provider + ", " + r.model + "): " + e.what() +
                         " (unknown call?)",
                     e.code());
  }
  const int64_t id = db_->last_rowid();
  w.commit();
  return {id, true};
}

PutAnsweredCallResult RunStore::put_answered_call(const LlmCallRecord& call,
                                                 std::vector<LlmResponseRecord> responses) {
  store::WriteScope w(*db_, "put_answered_call");
  PutAnsweredCallResult out;
  out.call_id = put_llm_call(call);
  for (auto& r : responses) {
    r.call_id = out.call_id;
    out.responses.push_back(put_response(r));
  }
  w.commit();
  return out;
}

std::optional<LlmResponseRecord> RunStore::find_response(const ResponseKey& k) const {
  sqlite::CachedUse st(db_->db(), db_->sql("llm_responses.by_key", [&] {
    return store::select_from<LlmResponseRecord>(*db_) +
           "WHERE r.provider = ?1 AND r.model = ?2 AND r.prompt_hash = ?3 AND "
           "r.params_hash = ?4 AND r.sample_index = ?5 AND r.seed = ?6";
  }));
  st->bind_text(1, k.provider)
      .bind_text(2, k.model)
      .bind_text(3, k.prompt_hash)
      .bind_text(4, k.params_hash)
      .bind_int64(5, k.sample_index)
      .bind_int64(6, k.seed);
  if (!st->step()) return std::nullopt;
  return store::read_row<LlmResponseRecord>(*db_, *st);
}

std::optional<LlmResponseRecord> RunStore::find_response(int64_t response_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("llm_responses.by_id", [&] {
    return store::select_from<LlmResponseRecord>(*db_) + "WHERE r.id = ?1";
  }));
  st->bind_int64(1, response_id);
  if (!st->step()) return std::nullopt;
  return store::read_row<LlmResponseRecord>(*db_, *st);
}

}  // namespace palladium
