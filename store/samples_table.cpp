#include "store/column_sql.hpp"
#include "store/content_hash.hpp"
#include "store/run_store.hpp"

namespace palladium {
namespace {

// The SELECT of samples `s` (with or without their texts), then `where`.
const char* sample_sql(const store::Database& db, RunStore::Texts texts, const char* where) {
  const bool all = texts == RunStore::Texts::all;
  return db.sql(std::string(all ? "samples.texts " : "samples.bare ") + where,
                [&] { return store::select_from<SampleRecord>(db, all) + where; });
}

std::vector<SampleRecord> read_samples(const store::Database& db, sqlite::Statement& st) {
  std::vector<SampleRecord> out;
  while (st.step()) out.push_back(store::read_row<SampleRecord>(db, st));
  return out;
}

}  // namespace

PutSampleResult RunStore::put_sample(const SampleRecord& s) {
  store::WriteScope w(*db_, "put_sample");
  const std::string what = "put_sample (run " + std::to_string(s.run_id) + ", " + s.workload +
                           ", " + s.method + ", seed " + std::to_string(s.seed) + ", sample " +
                           std::to_string(s.sample_index) + ")";
  SampleRecord row = s;
  row.prompt_hash = prompt_hash(s.prompt_system, s.prompt_user);
  PutSampleResult result;
  {
    sqlite::CachedUse live(db_->db(),
                           "SELECT id, prompt_hash FROM samples WHERE run_id = ?1 AND "
                           "workload = ?2 AND method = ?3 AND seed = ?4 AND sample_index = ?5 "
                           "AND superseded = 0");
    live->bind_int64(1, s.run_id)
        .bind_text(2, s.workload)
        .bind_text(3, s.method)
        .bind_int64(4, s.seed)
        .bind_int64(5, s.sample_index);
    if (live->step()) {
      result.id = live->int64(0);
      if (live->text(1) == row.prompt_hash) return result;  // nothing written
      result.superseded_id = result.id;
    }
  }
  if (result.superseded_id) {
    sqlite::CachedUse st(db_->db(), "UPDATE samples SET superseded = 1 WHERE id = ?1");
    st->bind_int64(1, *result.superseded_id).run();
  }
  try {
    static const std::string sql = store::insert_sql<SampleRecord>();
    sqlite::CachedUse st(db_->db(), sql.c_str());
    store::bind_row(*db_, *st, row);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError(what + ": " + e.what() + " (unknown run, parent, plan or response?)",
                     e.code());
  }
  result.id = db_->last_rowid();
  result.inserted = true;
  w.commit();
  return result;
}

PutSampleResult RunStore::put_generated_sample(SampleRecord sample, LlmCallRecord call,
                                               LlmResponseRecord response) {
  store::WriteScope w(*db_, "put_generated_sample");
  response.call_id = put_llm_call(call);
  sample.response_id = put_response(response).id;
  PutSampleResult result = put_sample(sample);
  w.commit();
  return result;
}

std::optional<SampleRecord> RunStore::find_sample(const SampleKey& k) const {
  sqlite::CachedUse st(db_->db(),
                       sample_sql(*db_, Texts::all,
                                  "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 AND "
                                  "s.seed = ?4 AND s.sample_index = ?5 AND s.superseded = 0"));
  st->bind_int64(1, k.run_id)
      .bind_text(2, k.workload)
      .bind_text(3, k.method)
      .bind_int64(4, k.seed)
      .bind_int64(5, k.sample_index);
  if (!st->step()) return std::nullopt;
  return store::read_row<SampleRecord>(*db_, *st);
}

std::optional<SampleRecord> RunStore::find_sample(int64_t sample_id) const {
  sqlite::CachedUse st(db_->db(), sample_sql(*db_, Texts::all, "WHERE s.id = ?1"));
  st->bind_int64(1, sample_id);
  if (!st->step()) return std::nullopt;
  return store::read_row<SampleRecord>(*db_, *st);
}

StoredSearch RunStore::search_samples(const SampleKey& k) const {
  StoredSearch out;
  {
    sqlite::CachedUse st(db_->db(),
                         sample_sql(*db_, Texts::all,
                                    "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 "
                                    "AND s.seed = ?4 AND s.superseded = 0 ORDER BY s.sample_index"));
    st->bind_int64(1, k.run_id).bind_text(2, k.workload).bind_text(3, k.method).bind_int64(4, k.seed);
    out.samples = read_samples(*db_, *st);
  }
  // A result from a quarantined key is not reused: the resumed search evaluates it again.
  for (auto& e : search_evaluations(k))
    if (!e.needs_reevaluation) out.evaluations.push_back(std::move(e));
  return out;
}

void RunStore::supersede_sample(int64_t sample_id) {
  store::WriteScope w(*db_, "supersede_sample");
  sqlite::CachedUse st(db_->db(), "UPDATE samples SET superseded = 1 WHERE id = ?1");
  st->bind_int64(1, sample_id).run();
  if (db_->changes() != 1) db_->bad("supersede_sample: no sample " + std::to_string(sample_id));
  w.commit();
}

std::vector<SampleRecord> RunStore::samples(int64_t run_id, Texts texts,
                                            bool include_superseded) const {
  sqlite::CachedUse st(db_->db(),
                       sample_sql(*db_, texts,
                                  include_superseded
                                      ? "WHERE s.run_id = ?1 ORDER BY s.id"
                                      : "WHERE s.run_id = ?1 AND s.superseded = 0 ORDER BY s.id"));
  st->bind_int64(1, run_id);
  return read_samples(*db_, *st);
}

std::vector<SampleRecord> RunStore::candidates(int64_t run_id, Texts texts) const {
  sqlite::CachedUse st(db_->db(), sample_sql(*db_, texts,
                                             "WHERE s.run_id = ?1 AND s.superseded = 0 AND "
                                             "s.role IN ('code', 'repair') ORDER BY s.id"));
  st->bind_int64(1, run_id);
  return read_samples(*db_, *st);
}

}  // namespace palladium
