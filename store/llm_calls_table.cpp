#include <algorithm>

#include "store/column_sql.hpp"
#include "store/run_store.hpp"

namespace palladium {

int64_t RunStore::put_llm_call(const LlmCallRecord& c) {
  store::WriteScope w(*db_, "put_llm_call");
  if (c.status != "ok" && c.status != "error") {
    db_->bad("put_llm_call: status must be 'ok' or 'error', not '" + c.status + "'");
  }
  try {
    static const std::string sql = store::insert_sql<LlmCallRecord>();
    sqlite::CachedUse st(db_->db(), sql.c_str());
    store::bind_row(*db_, *st, c);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError("put_llm_call (run " + (c.run_id ? std::to_string(*c.run_id) : "none") +
                         "): " + e.what(),
                     e.code());
  }
  const int64_t id = db_->last_rowid();
  w.commit();
  return id;
}

std::vector<LlmCallRecord> RunStore::llm_calls(int64_t run_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("llm_calls.of_run", [&] {
    return store::select_from<LlmCallRecord>(*db_) + "WHERE lc.run_id = ?1 ORDER BY lc.id";
  }));
  st->bind_int64(1, run_id);
  std::vector<LlmCallRecord> out;
  while (st->step()) out.push_back(store::read_row<LlmCallRecord>(*db_, *st));
  return out;
}

std::vector<std::string> RunStore::models(int64_t run_id) const {
  sqlite::CachedUse st(
      db_->db(),
      "SELECT model FROM ("
      "SELECT model, 0 AS k, MIN(id) AS o FROM llm_calls WHERE run_id = ?1 GROUP BY model "
      "UNION ALL SELECT r.model, 1, MIN(r.id) FROM samples s "
      "JOIN llm_responses r ON r.id = s.response_id WHERE s.run_id = ?1 AND s.superseded = 0 "
      "AND s.role IN ('code', 'repair') GROUP BY r.model) ORDER BY k, o");
  st->bind_int64(1, run_id);
  std::vector<std::string> out;
  while (st->step()) {
    std::string model = st->text(0);
    if (std::find(out.begin(), out.end(), model) == out.end()) out.push_back(std::move(model));
  }
  return out;
}

}  // namespace palladium
