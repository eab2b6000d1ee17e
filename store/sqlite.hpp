// Thin RAII over the SQLite3 C API, for the store's own use.
//
// Private to palladium_store: callers use RunStore. Every failure throws
// StoreError with the database path and SQLite's message. Not thread-safe.

#ifndef PALLADIUM_STORE_SQLITE_HPP_
#define PALLADIUM_STORE_SQLITE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace palladium::sqlite {

// An open connection. Move-only; closes on destruction.
class Db {
 public:
  // Opens (creating if needed) the database at `path`. Throws StoreError.
  explicit Db(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements that return no rows of interest.
  void exec(const std::string& sql);

  // The first column of the first row of `sql` as text ("" if no row).
  std::string query_text(const std::string& sql);

  // "<what> (<path>): <sqlite message>", for errors.
  std::string describe(std::string_view what) const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
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

}  // namespace palladium::sqlite

#endif  // PALLADIUM_STORE_SQLITE_HPP_
