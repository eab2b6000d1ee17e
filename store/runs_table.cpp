#include <algorithm>

#include "store/column_sql.hpp"
#include "store/content_hash.hpp"
#include "store/run_identity.hpp"
#include "store/run_store.hpp"

namespace palladium {
namespace {

RunRecord read_run(const store::Database& db, const sqlite::Statement& st) {
  RunRecord run = store::read_row<RunRecord>(db, st);
  // A database from before schema version 3, read-only: as a migration would have filled it.
  if (db.found_version() < 3) identify(run);
  return run;
}

}  // namespace

int64_t RunStore::begin_or_resume_run(const std::string& name, const std::string& config_text,
                                      std::optional<int64_t> cell_id) {
  store::WriteScope w(*db_, "begin_or_resume_run");
  if (cell_id && !find_cell(*cell_id)) {
    db_->bad("begin_or_resume_run: no cell " + std::to_string(*cell_id));
  }
  RunRecord run;
  run.name = name;
  run.config_text = config_text;
  run.config_hash = sha256_hex(config_text);
  run.cell_id = cell_id;
  std::optional<int64_t> id;
  {
    sqlite::CachedUse find(db_->db(),
                           "SELECT max(id) FROM runs WHERE config_hash = ?1 AND cell_id IS ?2");
    find->bind_text(1, run.config_hash).bind_opt_int64(2, cell_id);
    if (find->step()) id = find->opt_int64(0);
  }
  if (id) {
    sqlite::CachedUse resume(db_->db(),
                             "UPDATE runs SET status = 'running', finished_at = NULL, "
                             "status_reason = '' WHERE id = ?1");
    resume->bind_int64(1, *id).run();
  } else {
    identify(run);
    static const std::string sql = store::insert_sql<RunRecord>();
    sqlite::CachedUse insert(db_->db(), sql.c_str());
    store::bind_row(*db_, *insert, run);
    insert->run();
    id = db_->last_rowid();
  }
  w.commit();
  return *id;
}

void RunStore::finish_run(int64_t run_id, const std::string& status, const std::string& reason) {
  if (std::none_of(std::begin(kRunStatuses), std::end(kRunStatuses),
                   [&](const char* s) { return status == s; })) {
    db_->bad("finish_run: unknown status '" + status + "' for run " + std::to_string(run_id));
  }
  store::WriteScope w(*db_, "finish_run");
  sqlite::CachedUse st(db_->db(),
                       "UPDATE runs SET status = ?1, status_reason = ?2, finished_at = "
                       "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?3");
  st->bind_text(1, status).bind_text(2, reason).bind_int64(3, run_id).run();
  if (db_->changes() != 1) db_->bad("finish_run: no run " + std::to_string(run_id));
  w.commit();
}

std::optional<RunRecord> RunStore::find_run(int64_t run_id) const {
  sqlite::CachedUse st(db_->db(), db_->sql("runs.find", [&] {
    return store::select_from<RunRecord>(*db_) + "WHERE ru.id = ?1";
  }));
  st->bind_int64(1, run_id);
  if (!st->step()) return std::nullopt;
  return read_run(*db_, *st);
}

std::vector<RunRecord> RunStore::runs() const {
  sqlite::CachedUse st(db_->db(), db_->sql("runs.all", [&] {
    return store::select_from<RunRecord>(*db_) + "ORDER BY ru.id";
  }));
  std::vector<RunRecord> out;
  while (st->step()) out.push_back(read_run(*db_, *st));
  return out;
}

std::optional<int64_t> RunStore::latest_run_id() const {
  sqlite::CachedUse st(db_->db(), "SELECT max(id) FROM runs");
  if (!st->step()) return std::nullopt;
  return st->opt_int64(0);
}

}  // namespace palladium
