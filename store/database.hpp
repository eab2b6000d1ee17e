// The run store's database, below its tables: opening (what the file is, the writer's lock,
// WAL and durability), the schema and its migrations, group-commit batches and the write scope
// every write runs in. Private to palladium_store: callers use RunStore (store/run_store.hpp),
// whose table files (store/*_table.cpp) use this.

#ifndef PALLADIUM_STORE_DATABASE_HPP_
#define PALLADIUM_STORE_DATABASE_HPP_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "store/sqlite.hpp"

namespace palladium {

class RunLock;

namespace store {

// Version 3 stores each run's and cell's method, model label and suite (store/run_identity.hpp);
// a version-2 database is migrated by a read-write open and read as if migrated by a read-only
// one. Bump with any schema.sql change that needs more than IF NOT EXISTS and added
// nullable/defaulted columns, and say in migrate() how an older database gets there.
inline constexpr int kSchemaVersion = 3;

class Database {
 public:
  struct Options {
    bool read_only = false;
    bool sync_full = true;
    bool cache_statements = true;
  };

  // Opens, checks, locks (read-write) and migrates the database at `path` (":memory:" works,
  // without WAL and lock). Throws StoreError naming `path`.
  static std::unique_ptr<Database> open(const std::string& path, const Options& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The connection. Its statement cache makes even reads change it, so const readers get it too.
  sqlite::Db& db() const { return *db_; }
  const std::string& path() const { return db_->path(); }
  bool read_only() const { return db_->read_only(); }
  bool memory() const { return path() == ":memory:"; }
  // The schema version the file had when opened: kSchemaVersion unless a read-only open found
  // an older one, whose rows then lack what the newer version added.
  int found_version() const { return found_version_; }

  void begin_batch();
  void commit_batch();
  void rollback_batch();
  bool in_batch() const { return batch_open_; }

  // The columns `table` has in this database (none for a table it lacks), read on first use.
  const std::set<std::string>& columns(std::string_view table) const;
  // A statement text made once per connection by `make` (its column list depends on what the
  // database has), kept so the statement cache keys on one stable text.
  const char* sql(const std::string& key, const std::function<std::string()>& make) const;

  int64_t last_rowid() const;
  int changes() const;

  // "run store '<path>': <what>" as StoreError: the file or schema is not in a state to do
  // this (fail), or the caller asked for what cannot be (bad: an unknown id, a bad value).
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void bad(const std::string& what) const;

 private:
  Database(std::unique_ptr<sqlite::Db> db, std::shared_ptr<RunLock> lock, int found_version);

  std::unique_ptr<sqlite::Db> db_;
  std::shared_ptr<RunLock> lock_;  // null when read-only or in memory
  int found_version_;
  bool batch_open_ = false;
  mutable std::map<std::string, std::set<std::string>, std::less<>> columns_;
  mutable std::map<std::string, std::string> sql_;
};

// A write: its own transaction, or a savepoint inside the open one (the batch, or the write
// this one is part of). Throws StoreError on a read-only database.
class WriteScope {
 public:
  WriteScope(Database& db, const char* what);
  void commit();

 private:
  std::optional<sqlite::Savepoint> savepoint_;
  std::optional<sqlite::Transaction> transaction_;
};

}  // namespace store
}  // namespace palladium

#endif  // PALLADIUM_STORE_DATABASE_HPP_
