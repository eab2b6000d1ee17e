#include "store/sqlite.hpp"

#include <sqlite3.h>

#include "store/store_error.hpp"

namespace palladium::sqlite {

namespace {
// What an SQLite failure lets the caller do.
Errc code_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Errc::aborted;
    case SQLITE_FULL:
      return Errc::resource_exhausted;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return Errc::unavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Errc::data_loss;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return Errc::invalid_argument;
    default:
      return Errc::failed_precondition;
  }
}
}  // namespace

Db::Db(const std::string& path, Mode mode) : path_(path), mode_(mode) {
  const int flags = mode == Mode::read_only ? SQLITE_OPEN_READONLY
                                            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open run store '" + path + "': " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);  // a handle is allocated even on most failures
    db_ = nullptr;
    throw StoreError(msg, code_of(rc));
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() {
  cache_.clear();  // statements must be finalized before the connection closes
  sqlite3_close(db_);
}

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
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = "run store '" + path_ + "': " + (err ? err : "unknown error") +
                      " in: " + sql.substr(0, 80);
    sqlite3_free(err);
    throw StoreError(msg, code_of(rc));
  }
}

Errc Db::last_error_code() const { return code_of(sqlite3_extended_errcode(db_)); }

std::string Db::query_text(const std::string& sql) {
  Statement st(*this, sql);
  return st.step() ? st.text(0) : std::string();
}

Statement& Db::cached(const char* sql) {
  auto& slot = cache_[sql];
  if (!slot || !cache_statements_) {
    slot = std::make_unique<Statement>(*this, sql);
  } else {
    slot->reset();
  }
  return *slot;
}

Statement::Statement(const Db& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
    throw StoreError(db.describe("prepare failed"), db.last_error_code());
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

namespace {
void check_bind(const Db& db, int rc) {
  if (rc != SQLITE_OK) throw StoreError(db.describe("bind failed"), db.last_error_code());
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

Statement& Statement::bind_opt_int64(int index, const std::optional<int64_t>& value) {
  return value ? bind_int64(index, *value) : bind_null(index);
}

Statement& Statement::bind_opt_double(int index, const std::optional<double>& value) {
  return value ? bind_double(index, *value) : bind_null(index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw StoreError(db_.describe("statement failed"), db_.last_error_code());
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  // sqlite3_reset repeats the last step's error code; that error was already
  // reported by step(), so it is not an error of the reset.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

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

namespace {
// Transaction control runs once per write or batch: cached like the rest.
void run_cached(Db& db, const char* sql) { CachedUse(db, sql)->run(); }
}  // namespace

Transaction::Transaction(Db& db) : db_(db) { run_cached(db_, "BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  // Best effort: a destructor must not throw, and SQLite rolls back an
  // unfinished transaction on close anyway.
  sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  run_cached(db_, "COMMIT");
  done_ = true;
}

Savepoint::Savepoint(Db& db) : db_(db) { run_cached(db_, "SAVEPOINT write"); }

Savepoint::~Savepoint() {
  if (done_) return;
  // ROLLBACK TO undoes the savepoint's writes but keeps it open; RELEASE
  // then removes it, leaving the enclosing transaction as it was.
  sqlite3_exec(db_.handle(), "ROLLBACK TO write; RELEASE write", nullptr, nullptr, nullptr);
}

void Savepoint::release() {
  run_cached(db_, "RELEASE write");
  done_ = true;
}

}  // namespace palladium::sqlite
