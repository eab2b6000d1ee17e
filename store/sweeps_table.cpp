#include "store/column_sql.hpp"
#include "store/content_hash.hpp"
#include "store/run_store.hpp"

namespace palladium {

int64_t RunStore::begin_or_resume_sweep(const std::string& name, const std::string& config_text) {
  store::WriteScope w(*db_, "begin_or_resume_sweep");
  SweepRecord sweep;
  sweep.name = name;
  sweep.config_text = config_text;
  sweep.config_hash = sha256_hex(config_text);
  {
    static const std::string sql =
        store::insert_sql<SweepRecord>() + " ON CONFLICT (config_hash) DO NOTHING";
    sqlite::CachedUse st(db_->db(), sql.c_str());
    store::bind_row(*db_, *st, sweep);
    st->run();
  }
  sqlite::CachedUse id(db_->db(), "SELECT id FROM sweeps WHERE config_hash = ?1");
  id->bind_text(1, sweep.config_hash);
  if (!id->step()) db_->fail("sweep vanished");
  const int64_t result = id->int64(0);
  w.commit();
  return result;
}

std::optional<SweepRecord> RunStore::find_sweep(int64_t sweep_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("sweeps.find", [&] {
    return store::select_from<SweepRecord>(*db_) + "WHERE sw.id = ?1";
  }));
  st->bind_int64(1, sweep_id);
  if (!st->step()) return std::nullopt;
  return store::read_row<SweepRecord>(*db_, *st);
}

std::vector<SweepRecord> RunStore::sweeps() const {
  sqlite::CachedUse st(db_->db(), db_->sql("sweeps.all", [&] {
    return store::select_from<SweepRecord>(*db_) + "ORDER BY sw.id";
  }));
  std::vector<SweepRecord> out;
  while (st->step()) out.push_back(store::read_row<SweepRecord>(*db_, *st));
  return out;
}

}  // namespace palladium
