#include "store/database.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "store/run_identity.hpp"
#include "store/run_lock.hpp"
#include "store/schema_sql.hpp"
#include "store/store_error.hpp"

namespace palladium::store {
namespace {

// "PALD": marks the file as ours, so a foreign SQLite file is recognised
// before anything is written to it.
constexpr int64_t kApplicationId = 0x50414C44;
// The oldest version open() migrates.
constexpr int kOldestMigrated = 2;

// How long a writer waits for another connection's lock before SQLITE_BUSY.
constexpr int kBusyTimeoutMs = 10000;

std::string where(const sqlite::Db& db) { return "run store '" + db.path() + "'"; }

[[noreturn]] void fail_on(const sqlite::Db& db, const std::string& what) {
  throw StoreError(where(db) + ": " + what, Errc::failed_precondition);
}

int64_t query_int(sqlite::Db& db, const std::string& sql) {
  sqlite::Statement st(db, sql);
  return st.step() ? st.int64(0) : 0;
}

// What the file at hand is, found by reading only: its schema version, or 0 for a new (empty)
// file.
int check_identity(sqlite::Db& db) {
  const int64_t app_id = query_int(db, "PRAGMA application_id");
  const int64_t version = query_int(db, "PRAGMA user_version");
  const int64_t objects = query_int(db, "SELECT count(*) FROM sqlite_master");
  if (app_id == kApplicationId) {
    if (version >= kOldestMigrated && version <= kSchemaVersion) return static_cast<int>(version);
    if (version > kSchemaVersion) {
      fail_on(db, "schema version " + std::to_string(version) + " is newer than this build's " +
                   std::to_string(kSchemaVersion) + "; use a newer palladium");
    }
    fail_on(db, "unknown schema version " + std::to_string(version) + " (this build reads " +
                 std::to_string(kOldestMigrated) + " to " + std::to_string(kSchemaVersion) + ")");
  }
  if (app_id == 0 && version == 0 && objects == 0) return 0;
  if (app_id == 0 && version == 1 &&
      query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                    "name IN ('runs', 'candidates', 'evaluations', 'llm_calls')") == 4) {
    fail_on(db,
         "schema version 1, written by an older palladium; this build reads version " +
             std::to_string(kSchemaVersion) +
             " only and leaves the file untouched. Start the run again into a new database "
             "(--db NEW.db), or read this one with the palladium that wrote it");
  }
  char id[16];
  std::snprintf(id, sizeof id, "0x%08llx", static_cast<unsigned long long>(app_id));
  fail_on(db, "not a Palladium run store (application_id " + std::string(id) + ", user_version " +
               std::to_string(version) + ", " + std::to_string(objects) +
               " schema objects); refusing to read or change it");
}

// The columns schema.sql declares that `db` lacks, added in place: a column
// added to a CREATE TABLE reaches databases made before it. ALTER TABLE
// keeps type, NOT NULL and DEFAULT; REFERENCES and CHECK clauses of an
// added column hold in new databases only.
void add_missing_columns(sqlite::Db& db) {
  sqlite::Db ref(":memory:", sqlite::Db::Mode::read_write);
  ref.exec(kSchemaSql);
  sqlite::Statement tables(ref, "SELECT name FROM sqlite_master WHERE type = 'table'");
  while (tables.step()) {
    const std::string table = tables.text(0);
    std::set<std::string> have;
    {
      sqlite::Statement cols(db, "SELECT name FROM pragma_table_info(?1)");
      cols.bind_text(1, table);
      while (cols.step()) have.insert(cols.text(0));
    }
    sqlite::Statement want(ref,
                           "SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info(?1)");
    want.bind_text(1, table);
    while (want.step()) {
      const std::string column = want.text(0);
      if (have.count(column)) continue;
      const bool not_null = want.int64(2) != 0;
      const std::optional<std::string> dflt = want.opt_text(3);
      if (not_null && !dflt) {
        fail_on(db, "store/schema.sql adds column " + table + "." + column +
                     " as NOT NULL without a DEFAULT, which existing databases cannot get; "
                     "give it a DEFAULT");
      }
      std::string sql = "ALTER TABLE " + table + " ADD COLUMN " + column + " " + want.text(1);
      if (not_null) sql += " NOT NULL";
      if (dflt) sql += " DEFAULT " + *dflt;
      db.exec(sql);
    }
  }
}

// Version 2 -> 3: each run's and cell's method, model label and suite, from its stored config
// (the columns themselves came with add_missing_columns).
void identify_runs_and_cells(sqlite::Db& db) {
  for (const char* table : {"runs", "cells"}) {
    sqlite::Statement rows(db, std::string("SELECT id, config_text FROM ") + table);
    sqlite::Statement set(db, std::string("UPDATE ") + table +
                                  " SET method = ?1, model = ?2, suite_json = ?3 WHERE id = ?4");
    while (rows.step()) {
      const RunIdentity id = run_identity(rows.text(1));
      set.bind_text(1, id.method)
          .bind_text(2, id.model)
          .bind_text(3, nlohmann::json(id.suite).dump())
          .bind_int64(4, rows.int64(0));
      set.run();
      set.reset();
    }
  }
}

// Brings a database of version `found` (kOldestMigrated..kSchemaVersion) to kSchemaVersion,
// inside the open transaction: new columns first (schema.sql), then each version's data step.
void migrate(sqlite::Db& db, int found) {
  add_missing_columns(db);
  if (found < 3) identify_runs_and_cells(db);
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
}

}  // namespace

std::unique_ptr<Database> Database::open(const std::string& path, const Options& options) {
  const bool memory = path == ":memory:";
  if (options.read_only && !memory && !std::filesystem::is_regular_file(path)) {
    throw StoreError("run store '" + path + "': no such database file");
  }
  auto db = std::make_unique<sqlite::Db>(
      path, options.read_only ? sqlite::Db::Mode::read_only : sqlite::Db::Mode::read_write);
  // Errors below already name the path (Db::exec / describe / fail).
  sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);
  db->set_statement_cache(options.cache_statements);

  // Nothing is written before the file is known to be ours (or empty).
  const int found = check_identity(*db);
  const bool is_new = found == 0;
  if (options.read_only) {
    if (is_new) fail_on(*db, "empty file, not a Palladium run store");
    db->exec("PRAGMA query_only=ON");
    return std::unique_ptr<Database>(new Database(std::move(db), nullptr, found));
  }

  std::shared_ptr<RunLock> lock;
  bool took_lock = false;
  if (!memory) lock = RunLock::acquire(path, &took_lock);

  const std::string mode_text = db->query_text("PRAGMA journal_mode=WAL");
  if (mode_text != "wal" && !(memory && mode_text == "memory")) {
    fail_on(*db, "cannot enable WAL (journal_mode is '" + mode_text + "')");
  }
  // FULL: in WAL mode, one fsync of the log per commit, so a committed batch
  // survives a power loss too (docs/architecture.md, "Run store").
  db->exec(options.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  db->exec("PRAGMA foreign_keys=ON");

  sqlite::Transaction tx(*db);
  if (!is_new) migrate(*db, found);
  db->exec(kSchemaSql);
  if (is_new) {
    db->exec("PRAGMA application_id=" + std::to_string(kApplicationId));
    db->exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  }
  if (took_lock) {
    // We hold the one writer's lock, so no process is running these runs:
    // theirs died without finishing (SIGKILL, power loss, a crash).
    sqlite::Statement stale(*db,
                            "UPDATE runs SET status = 'interrupted', finished_at = "
                            "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), status_reason = ?1 "
                            "WHERE status = 'running'");
    stale.bind_text(1, "its process ended without finishing; found by pid " +
                           std::to_string(getpid()));
    stale.run();
  }
  tx.commit();
  return std::unique_ptr<Database>(new Database(std::move(db), std::move(lock), kSchemaVersion));
}

Database::Database(std::unique_ptr<sqlite::Db> db, std::shared_ptr<RunLock> lock,
                   int found_version)
    : db_(std::move(db)), lock_(std::move(lock)), found_version_(found_version) {}

Database::~Database() {
  // An unfinished batch is not committed: its senders were never answered.
  if (batch_open_) sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Database::begin_batch() {
  if (read_only()) fail("begin_batch: opened read-only");
  if (batch_open_) fail("begin_batch: a batch is already open");
  sqlite::CachedUse(*db_, "BEGIN IMMEDIATE")->run();
  batch_open_ = true;
}

void Database::commit_batch() {
  if (!batch_open_) return;
  batch_open_ = false;
  try {
    sqlite::CachedUse(*db_, "COMMIT")->run();
  } catch (...) {
    sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void Database::rollback_batch() {
  if (!batch_open_) return;
  batch_open_ = false;
  sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

const std::set<std::string>& Database::columns(std::string_view table) const {
  auto it = columns_.find(table);
  if (it != columns_.end()) return it->second;
  std::set<std::string> have;
  sqlite::Statement cols(*db_, "SELECT name FROM pragma_table_info(?1)");
  cols.bind_text(1, table);
  while (cols.step()) have.insert(cols.text(0));
  return columns_.emplace(std::string(table), std::move(have)).first->second;
}

const char* Database::sql(const std::string& key, const std::function<std::string()>& make) const {
  auto it = sql_.find(key);
  if (it == sql_.end()) it = sql_.emplace(key, make()).first;
  return it->second.c_str();
}

int64_t Database::last_rowid() const { return sqlite3_last_insert_rowid(db_->handle()); }

int Database::changes() const { return sqlite3_changes(db_->handle()); }

void Database::fail(const std::string& what) const { fail_on(*db_, what); }

void Database::bad(const std::string& what) const {
  throw StoreError(where(*db_) + ": " + what, Errc::invalid_argument);
}

WriteScope::WriteScope(Database& db, const char* what) {
  if (db.read_only()) db.fail(std::string(what) + ": opened read-only");
  if (db.in_batch() || !sqlite3_get_autocommit(db.db().handle())) {
    savepoint_.emplace(db.db());
  } else {
    transaction_.emplace(db.db());
  }
}

void WriteScope::commit() {
  if (savepoint_) savepoint_->release();
  if (transaction_) transaction_->commit();
}

}  // namespace palladium::store
