#include "store/sqlite.hpp"

#include <sqlite3.h>

#include "store/store_error.hpp"

namespace palladium::sqlite {

Db::Db(const std::string& path) : path_(path) {
  const int rc = sqlite3_open_v2(
      path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open run store '" + path + "': " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);  // a handle is allocated even on most failures
    db_ = nullptr;
    throw StoreError(msg);
  }
}

Db::~Db() { sqlite3_close(db_); }

std::string Db::describe(std::string_view what) const {
  std::string out(what);
  out += " (";
  out += path_;
  out += "): ";
  out += sqlite3_errmsg(db_);
  return out;
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = "run store '" + path_ + "': " +
                      (err ? err : "unknown error") + " in: " +
                      sql.substr(0, 80);
    sqlite3_free(err);
    throw StoreError(msg);
  }
}

std::string Db::query_text(const std::string& sql) {
  Statement st(*this, sql);
  return st.step() ? st.text(0) : std::string();
}

Statement::Statement(const Db& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()),
                         &stmt_, nullptr) != SQLITE_OK) {
    throw StoreError(db.describe("prepare failed"));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

namespace {
void check_bind(const Db& db, int rc) {
  if (rc != SQLITE_OK) throw StoreError(db.describe("bind failed"));
}
}  // namespace

Statement& Statement::bind_int64(int index, int64_t value) {
  check_bind(db_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  check_bind(db_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies, so temporaries are safe to pass.
  check_bind(db_, sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                                      SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(db_, sqlite3_bind_null(stmt_, index));
  return *this;
}

Statement& Statement::bind_opt_int64(int index,
                                     const std::optional<int64_t>& value) {
  return value ? bind_int64(index, *value) : bind_null(index);
}

Statement& Statement::bind_opt_double(int index,
                                      const std::optional<double>& value) {
  return value ? bind_double(index, *value) : bind_null(index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw StoreError(db_.describe("statement failed"));
}

void Statement::run() {
  while (step()) {
  }
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (!p) return std::string();
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> Statement::opt_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::opt_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::opt_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  // Best effort: a destructor must not throw, and SQLite rolls back an
  // unfinished transaction on close anyway.
  sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace palladium::sqlite
