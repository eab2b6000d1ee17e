// Thin RAII over the SQLite3 C API, for the store's own use.
//
// Private to palladium_store: callers use RunStore. Every failure throws
// StoreError with the database path and SQLite's message. Not thread-safe:
// one connection, one thread at a time.

#ifndef PALLADIUM_STORE_SQLITE_HPP_
#define PALLADIUM_STORE_SQLITE_HPP_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/errc.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace palladium::sqlite {

class Statement;

// An open connection. Closes on destruction (after its cached statements).
class Db {
 public:
  enum class Mode {
    read_write,  // creates the file if missing
    read_only,   // the file must exist; no write can happen through it
  };

  // Opens the database at `path`. Throws StoreError naming `path`.
  Db(const std::string& path, Mode mode);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements that return no rows of interest.
  void exec(const std::string& sql);

  // The first column of the first row of `sql` as text ("" if no row).
  std::string query_text(const std::string& sql);

  // The statement for `sql`, prepared on first use and kept for the life of
  // the connection (re-preparing cost ~30% of the store's CPU). It comes
  // reset, with no bindings. Only one caller may use a given SQL text at a
  // time: a Statement returned here is valid until the next cached() call
  // with the same text. Use it through CachedUse so it is reset (and its
  // read snapshot released) when the caller is done.
  Statement& cached(const char* sql);
  // false: cached() prepares the statement again on every call (to measure
  // what the cache saves). Default true.
  void set_statement_cache(bool on) { cache_statements_ = on; }

  // "<what> (<path>): <sqlite message>", for errors.
  std::string describe(std::string_view what) const;
  // The Errc of the connection's last failure (store_error.hpp).
  Errc last_error_code() const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  bool read_only() const { return mode_ == Mode::read_only; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  Mode mode_;
  bool cache_statements_ = true;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

// A prepared statement. Bind indexes are 1-based, column indexes 0-based,
// as in the C API.
class Statement {
 public:
  Statement(const Db& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind_int64(int index, int64_t value);
  Statement& bind_double(int index, double value);
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_null(int index);
  Statement& bind_opt_int64(int index, const std::optional<int64_t>& value);
  Statement& bind_opt_double(int index, const std::optional<double>& value);

  // Advances; true when a row is available, false when done.
  bool step();
  // Steps to completion, for statements that return no rows.
  void run();
  // Back to before the first step, with every binding cleared.
  void reset();

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // "" for NULL
  std::optional<int64_t> opt_int64(int column) const;
  std::optional<double> opt_double(int column) const;
  std::optional<std::string> opt_text(int column) const;

 private:
  const Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A cached statement for one use: resets it on destruction, so a half-read
// result never holds a snapshot open.
//   CachedUse st(db, "SELECT ...");
//   st->bind_int64(1, id);
//   while (st->step()) ...
class CachedUse {
 public:
  CachedUse(Db& db, const char* sql) : st_(db.cached(sql)) {}
  ~CachedUse() { st_.reset(); }
  CachedUse(const CachedUse&) = delete;
  CachedUse& operator=(const CachedUse&) = delete;
  Statement* operator->() { return &st_; }
  Statement& operator*() { return st_; }

 private:
  Statement& st_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so a
// concurrent reader cannot make the upgrade fail halfway); ROLLBACK on
// destruction unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

// A SAVEPOINT inside an open transaction: release() keeps its writes in the
// transaction; destruction without release() undoes them and only them.
class Savepoint {
 public:
  explicit Savepoint(Db& db);
  ~Savepoint();
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;
  void release();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace palladium::sqlite

#endif  // PALLADIUM_STORE_SQLITE_HPP_
