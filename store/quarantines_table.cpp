#include "store/column_sql.hpp"
#include "store/run_store.hpp"

namespace palladium {

int64_t RunStore::put_quarantine(const QuarantineRecord& q) {
  store::WriteScope w(*db_, "put_quarantine");
  static const std::string sql = store::insert_sql<QuarantineRecord>() +
                                 " ON CONFLICT (run_id, agent_key, agent_id) DO NOTHING";
  sqlite::CachedUse st(db_->db(), sql.c_str());
  try {
    store::bind_row(*db_, *st, q);
    st->run();
  } catch (const StoreError& e) {
    db_->bad("put_quarantine: run " + std::to_string(q.run_id) + ": " + e.what());
  }
  int64_t marked = 0;
  if (!q.agent_key.empty()) {
    sqlite::CachedUse mark(db_->db(),
                           "UPDATE evaluations SET needs_reevaluation = 1 "
                           "WHERE agent_key = ?1 AND needs_reevaluation = 0");
    mark->bind_text(1, q.agent_key).run();
    marked = db_->changes();
  }
  w.commit();
  return marked;
}

std::vector<QuarantineRecord> RunStore::quarantines() const {
  std::vector<QuarantineRecord> out;
  // A database written before quarantines existed has no table (a read-only open does not
  // migrate): it has none.
  if (db_->columns("quarantined_keys").empty()) return out;
  sqlite::CachedUse st(db_->db(), db_->sql("quarantines.all", [&] {
    return store::select_from<QuarantineRecord>(*db_) + "ORDER BY q.id";
  }));
  while (st->step()) out.push_back(store::read_row<QuarantineRecord>(*db_, *st));
  return out;
}

}  // namespace palladium
