// The blobs table: every text (prompt, response, code, plan) once, named by its SHA-256.
#include "store/column_sql.hpp"
#include "store/content_hash.hpp"
#include "store/run_store.hpp"

namespace palladium {

std::string store::write_blob(Database& db, const std::string& text) {
  std::string hash = sha256_hex(text);
  sqlite::CachedUse st(db.db(),
                       "INSERT INTO blobs (hash, bytes, text) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (hash) DO NOTHING");
  st->bind_text(1, hash).bind_int64(2, static_cast<int64_t>(text.size())).bind_text(3, text);
  st->run();
  return hash;
}

std::string RunStore::put_blob(const std::string& text) {
  store::WriteScope w(*db_, "put_blob");
  std::string hash = store::write_blob(*db_, text);
  w.commit();
  return hash;
}

std::optional<std::string> RunStore::blob(const std::string& hash) const {
  sqlite::CachedUse st(db_->db(), "SELECT text FROM blobs WHERE hash = ?1");
  st->bind_text(1, hash);
  if (!st->step()) return std::nullopt;
  return st->text(0);
}

}  // namespace palladium
