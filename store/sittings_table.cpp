#include "store/column_sql.hpp"
#include "store/run_store.hpp"

namespace palladium {

int64_t RunStore::put_sitting(const SittingRecord& s) {
  store::WriteScope w(*db_, "put_sitting");
  if (s.kernels.empty())
    db_->bad("put_sitting: run " + std::to_string(s.run_id) + " workload " + s.workload +
             ": a sitting without kernels");
  SittingRow row;
  {
    sqlite::CachedUse next(db_->db(), "SELECT COALESCE(MAX(sitting), 0) + 1 FROM sittings");
    next->step();
    row.sitting = next->int64(0);
  }
  row.run_id = s.run_id;
  row.workload = s.workload;
  row.method = s.method;
  row.seed = s.seed;
  row.baseline_ms = s.baseline_ms;
  row.baseline_ms_low = s.baseline_ms_low;
  row.baseline_ms_high = s.baseline_ms_high;
  row.timing_runs = s.timing_runs;
  row.timing_kind = s.timing_kind;
  row.agent_key = s.agent_key;
  row.error = s.error;
  static const std::string sql = store::insert_sql<SittingRow>();
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    row.position = static_cast<int64_t>(i);
    row.kernel = s.kernels[i];
    sqlite::CachedUse st(db_->db(), sql.c_str());
    try {
      store::bind_row(*db_, *st, row);
      st->run();
    } catch (const StoreError& e) {
      db_->bad("put_sitting: run " + std::to_string(s.run_id) + " candidate " +
               std::to_string(row.kernel.candidate_id) + ": " + e.what());
    }
  }
  w.commit();
  return row.sitting;
}

std::vector<SittingRecord> RunStore::sittings(int64_t run_id) const {
  std::vector<SittingRecord> out;
  // A read-only open of a database made before re-timings does not migrate: it has none.
  if (db_->columns("sittings").empty()) return out;
  sqlite::CachedUse st(db_->db(), db_->sql("sittings.of_run", [&] {
    return store::select_from<SittingRow>(*db_) +
           "WHERE si.run_id = ?1 ORDER BY si.sitting, si.position";
  }));
  st->bind_int64(1, run_id);
  while (st->step()) {
    SittingRow row = store::read_row<SittingRow>(*db_, *st);
    if (out.empty() || out.back().sitting != row.sitting) {
      SittingRecord s;
      s.sitting = row.sitting;
      s.run_id = row.run_id;
      s.workload = row.workload;
      s.method = row.method;
      s.seed = row.seed;
      s.baseline_ms = row.baseline_ms;
      s.baseline_ms_low = row.baseline_ms_low;
      s.baseline_ms_high = row.baseline_ms_high;
      s.timing_runs = row.timing_runs;
      s.timing_kind = row.timing_kind;
      s.agent_key = row.agent_key;
      s.error = row.error;
      out.push_back(std::move(s));
    }
    out.back().kernels.push_back(row.kernel);
  }
  return out;
}

}  // namespace palladium
