#include "store/column_sql.hpp"
#include "store/run_identity.hpp"
#include "store/run_store.hpp"

namespace palladium {

int64_t RunStore::put_cell(const CellRecord& c) {
  store::WriteScope w(*db_, "put_cell");
  if (!find_sweep(c.sweep_id)) db_->bad("put_cell: no sweep " + std::to_string(c.sweep_id));
  {
    CellRecord cell = c;
    identify(cell);
    static const std::string sql =
        store::insert_sql<CellRecord>() + " ON CONFLICT (sweep_id, cell_key) DO NOTHING";
    sqlite::CachedUse st(db_->db(), sql.c_str());
    store::bind_row(*db_, *st, cell);
    st->run();
  }
  sqlite::CachedUse id(db_->db(), "SELECT id FROM cells WHERE sweep_id = ?1 AND cell_key = ?2");
  id->bind_int64(1, c.sweep_id).bind_text(2, c.cell_key);
  if (!id->step()) db_->fail("cell vanished");
  const int64_t result = id->int64(0);
  w.commit();
  return result;
}

std::optional<CellRecord> RunStore::find_cell(int64_t cell_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("cells.find", [&] {
    return store::select_from<CellRecord>(*db_) + "WHERE ce.id = ?1";
  }));
  st->bind_int64(1, cell_id);
  if (!st->step()) return std::nullopt;
  CellRecord cell = store::read_row<CellRecord>(*db_, *st);
  // A database from before schema version 3, read-only: as a migration would have filled it.
  if (db_->found_version() < 3) identify(cell);
  return cell;
}

std::vector<CellRecord> RunStore::cells(int64_t sweep_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("cells.of_sweep", [&] {
    return store::select_from<CellRecord>(*db_) + "WHERE ce.sweep_id = ?1 ORDER BY ce.ordinal, ce.id";
  }));
  st->bind_int64(1, sweep_id);
  std::vector<CellRecord> out;
  while (st->step()) {
    out.push_back(store::read_row<CellRecord>(*db_, *st));
    if (db_->found_version() < 3) identify(out.back());
  }
  return out;
}

}  // namespace palladium
