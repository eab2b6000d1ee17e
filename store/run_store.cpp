#include "store/run_store.hpp"

#include <sqlite3.h>

#include <utility>

#include "search/fnv1a.hpp"
#include "store/schema_sql.hpp"
#include "store/sqlite.hpp"

namespace palladium {

namespace {

// Bump with any schema.sql change that needs more than IF NOT EXISTS.
constexpr int kSchemaVersion = 1;

// How long a writer waits for another connection's lock before SQLITE_BUSY.
constexpr int kBusyTimeoutMs = 10000;

constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

constexpr const char* kCandidateColumns =
    "id, run_id, workload, method, seed, sample_index, parent_id, "
    "prompt_system, prompt_user, response, code, code_hash, created_at";

constexpr const char* kEvaluationColumns =
    "e.id, e.candidate_id, e.verdict, e.stage, e.error_text, "
    "e.error_signature, e.stdout, e.stderr, e.stage_ms_json, e.max_abs_err, "
    "e.max_rel_err, e.kernel_ms, e.baseline_ms, e.speedup, e.timing_kind, "
    "e.agent_id, e.backend, e.attempts, e.created_at";

constexpr const char* kLlmCallColumns =
    "id, run_id, candidate_id, provider, model, prompt_tokens, "
    "completion_tokens, tokens_estimated, latency_ms, created_at";

CandidateRecord read_candidate(const sqlite::Statement& st) {
  CandidateRecord c;
  c.id = st.int64(0);
  c.run_id = st.int64(1);
  c.workload = st.text(2);
  c.method = st.text(3);
  c.seed = st.int64(4);
  c.sample_index = static_cast<int>(st.int64(5));
  c.parent_id = st.opt_int64(6);
  c.prompt_system = st.text(7);
  c.prompt_user = st.text(8);
  c.response = st.text(9);
  c.code = st.text(10);
  c.code_hash = st.text(11);
  c.created_at = st.text(12);
  return c;
}

EvaluationRecord read_evaluation(const sqlite::Statement& st,
                                 const std::string& db_path) {
  EvaluationRecord e;
  e.id = st.int64(0);
  e.candidate_id = st.int64(1);
  const std::string verdict = st.text(2);
  auto v = verdict_from_string(verdict);
  if (!v) {
    throw StoreError("run store '" + db_path + "': evaluation " +
                     std::to_string(e.id) + " has unknown verdict '" +
                     verdict + "'");
  }
  e.verdict = *v;
  e.stage = st.text(3);
  e.error_text = st.text(4);
  e.error_signature = st.text(5);
  e.stdout_text = st.text(6);
  e.stderr_text = st.text(7);
  e.stage_ms_json = st.text(8);
  e.max_abs_err = st.opt_double(9);
  e.max_rel_err = st.opt_double(10);
  e.kernel_ms = st.opt_double(11);
  e.baseline_ms = st.opt_double(12);
  e.speedup = st.opt_double(13);
  e.timing_kind = st.text(14);
  e.agent_id = st.text(15);
  e.backend = st.text(16);
  e.attempts = static_cast<int>(st.int64(17));
  e.created_at = st.text(18);
  return e;
}

LlmCallRecord read_llm_call(const sqlite::Statement& st) {
  LlmCallRecord c;
  c.id = st.int64(0);
  c.run_id = st.int64(1);
  c.candidate_id = st.opt_int64(2);
  c.provider = st.text(3);
  c.model = st.text(4);
  c.prompt_tokens = static_cast<int>(st.int64(5));
  c.completion_tokens = static_cast<int>(st.int64(6));
  c.tokens_estimated = st.int64(7) != 0;
  c.latency_ms = st.real(8);
  c.created_at = st.text(9);
  return c;
}

}  // namespace

std::unique_ptr<RunStore> RunStore::open(const std::string& path) {
  auto db = std::make_unique<sqlite::Db>(path);
  // Errors below already name the path (Db::exec / describe).
  sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);
  const std::string mode = db->query_text("PRAGMA journal_mode=WAL");
  if (mode != "wal" && !(path == ":memory:" && mode == "memory")) {
    throw StoreError("run store '" + path +
                     "': cannot enable WAL (journal_mode is '" + mode + "')");
  }
  db->exec("PRAGMA foreign_keys=ON");

  const int version = std::stoi(db->query_text("PRAGMA user_version"));
  if (version > kSchemaVersion) {
    throw StoreError("run store '" + path + "': schema version " +
                     std::to_string(version) + " is newer than this build's " +
                     std::to_string(kSchemaVersion));
  }
  sqlite::Transaction tx(*db);
  db->exec(kSchemaSql);
  db->exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
  return std::unique_ptr<RunStore>(new RunStore(std::move(db)));
}

RunStore::RunStore(std::unique_ptr<sqlite::Db> db) : db_(std::move(db)) {}

RunStore::~RunStore() = default;

const std::string& RunStore::path() const { return db_->path(); }

int64_t RunStore::begin_or_resume_run(const std::string& name,
                                      const std::string& config_text) {
  const std::string hash = fnv1a64_hex(config_text);
  sqlite::Transaction tx(*db_);
  std::optional<int64_t> id;
  {
    sqlite::Statement find(
        *db_, "SELECT max(id) FROM runs WHERE config_hash = ?1");
    find.bind_text(1, hash);
    if (find.step()) id = find.opt_int64(0);
  }
  if (id) {
    sqlite::Statement resume(
        *db_,
        "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1");
    resume.bind_int64(1, *id).run();
  } else {
    sqlite::Statement insert(
        *db_,
        "INSERT INTO runs (name, config_text, config_hash) VALUES (?1, ?2, ?3)");
    insert.bind_text(1, name).bind_text(2, config_text).bind_text(3, hash);
    insert.run();
    id = sqlite3_last_insert_rowid(db_->handle());
  }
  tx.commit();
  return *id;
}

void RunStore::finish_run(int64_t run_id, const std::string& status) {
  sqlite::Transaction tx(*db_);
  sqlite::Statement st(*db_, std::string("UPDATE runs SET status = ?1, "
                                         "finished_at = ") +
                                 kNow + " WHERE id = ?2");
  st.bind_text(1, status).bind_int64(2, run_id).run();
  if (sqlite3_changes(db_->handle()) != 1) {
    throw StoreError("run store '" + path() + "': finish_run: no run " +
                     std::to_string(run_id));
  }
  tx.commit();
}

std::optional<RunRecord> RunStore::find_run(int64_t run_id) const {
  sqlite::Statement st(*db_,
                       "SELECT id, name, config_text, config_hash, "
                       "started_at, finished_at, status FROM runs WHERE id = ?1");
  st.bind_int64(1, run_id);
  if (!st.step()) return std::nullopt;
  RunRecord r;
  r.id = st.int64(0);
  r.name = st.text(1);
  r.config_text = st.text(2);
  r.config_hash = st.text(3);
  r.started_at = st.text(4);
  r.finished_at = st.opt_text(5);
  r.status = st.text(6);
  return r;
}

std::optional<int64_t> RunStore::latest_run_id() const {
  sqlite::Statement st(*db_, "SELECT max(id) FROM runs");
  if (!st.step()) return std::nullopt;
  return st.opt_int64(0);
}

int64_t RunStore::insert_candidate(const CandidateRecord& c) {
  sqlite::Transaction tx(*db_);
  {
    sqlite::Statement st(
        *db_,
        "INSERT INTO candidates (run_id, workload, method, seed, "
        "sample_index, parent_id, prompt_system, prompt_user, response, "
        "code, code_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
        "?11) ON CONFLICT (run_id, workload, method, seed, sample_index) "
        "DO NOTHING");
    st.bind_int64(1, c.run_id)
        .bind_text(2, c.workload)
        .bind_text(3, c.method)
        .bind_int64(4, c.seed)
        .bind_int64(5, c.sample_index)
        .bind_opt_int64(6, c.parent_id)
        .bind_text(7, c.prompt_system)
        .bind_text(8, c.prompt_user)
        .bind_text(9, c.response)
        .bind_text(10, c.code)
        .bind_text(11, fnv1a64_hex(c.code));
    st.run();
  }
  sqlite::Statement id(*db_,
                       "SELECT id FROM candidates WHERE run_id = ?1 AND "
                       "workload = ?2 AND method = ?3 AND seed = ?4 AND "
                       "sample_index = ?5");
  id.bind_int64(1, c.run_id)
      .bind_text(2, c.workload)
      .bind_text(3, c.method)
      .bind_int64(4, c.seed)
      .bind_int64(5, c.sample_index);
  if (!id.step()) {
    throw StoreError("run store '" + path() + "': candidate vanished");
  }
  const int64_t result = id.int64(0);
  tx.commit();
  return result;
}

std::optional<CandidateRecord> RunStore::find_candidate(
    int64_t run_id, const std::string& workload, const std::string& method,
    int64_t seed, int sample_index) const {
  sqlite::Statement st(*db_, std::string("SELECT ") + kCandidateColumns +
                                 " FROM candidates WHERE run_id = ?1 AND "
                                 "workload = ?2 AND method = ?3 AND seed = ?4 "
                                 "AND sample_index = ?5");
  st.bind_int64(1, run_id)
      .bind_text(2, workload)
      .bind_text(3, method)
      .bind_int64(4, seed)
      .bind_int64(5, sample_index);
  if (!st.step()) return std::nullopt;
  return read_candidate(st);
}

bool RunStore::insert_evaluation(const EvaluationRecord& e) {
  sqlite::Transaction tx(*db_);
  sqlite::Statement st(
      *db_,
      "INSERT INTO evaluations (candidate_id, verdict, stage, error_text, "
      "error_signature, stdout, stderr, stage_ms_json, max_abs_err, "
      "max_rel_err, kernel_ms, baseline_ms, speedup, timing_kind, agent_id, "
      "backend, attempts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11, ?12, ?13, ?14, ?15, ?16, ?17) ON CONFLICT (candidate_id) DO "
      "NOTHING");
  st.bind_int64(1, e.candidate_id)
      .bind_text(2, to_string(e.verdict))
      .bind_text(3, e.stage)
      .bind_text(4, e.error_text)
      .bind_text(5, e.error_signature)
      .bind_text(6, e.stdout_text)
      .bind_text(7, e.stderr_text)
      .bind_text(8, e.stage_ms_json)
      .bind_opt_double(9, e.max_abs_err)
      .bind_opt_double(10, e.max_rel_err)
      .bind_opt_double(11, e.kernel_ms)
      .bind_opt_double(12, e.baseline_ms)
      .bind_opt_double(13, e.speedup)
      .bind_text(14, e.timing_kind)
      .bind_text(15, e.agent_id)
      .bind_text(16, e.backend)
      .bind_int64(17, e.attempts);
  st.run();
  const bool inserted = sqlite3_changes(db_->handle()) == 1;
  tx.commit();
  return inserted;
}

std::optional<EvaluationRecord> RunStore::find_evaluation(
    int64_t candidate_id) const {
  sqlite::Statement st(*db_, std::string("SELECT ") + kEvaluationColumns +
                                 " FROM evaluations e WHERE e.candidate_id = ?1");
  st.bind_int64(1, candidate_id);
  if (!st.step()) return std::nullopt;
  return read_evaluation(st, path());
}

int64_t RunStore::insert_llm_call(const LlmCallRecord& c) {
  sqlite::Transaction tx(*db_);
  sqlite::Statement st(
      *db_,
      "INSERT INTO llm_calls (run_id, candidate_id, provider, model, "
      "prompt_tokens, completion_tokens, tokens_estimated, latency_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  st.bind_int64(1, c.run_id)
      .bind_opt_int64(2, c.candidate_id)
      .bind_text(3, c.provider)
      .bind_text(4, c.model)
      .bind_int64(5, c.prompt_tokens)
      .bind_int64(6, c.completion_tokens)
      .bind_int64(7, c.tokens_estimated ? 1 : 0)
      .bind_double(8, c.latency_ms);
  st.run();
  const int64_t id = sqlite3_last_insert_rowid(db_->handle());
  tx.commit();
  return id;
}

std::vector<CandidateRecord> RunStore::candidates(int64_t run_id) const {
  sqlite::Statement st(*db_, std::string("SELECT ") + kCandidateColumns +
                                 " FROM candidates WHERE run_id = ?1 "
                                 "ORDER BY id");
  st.bind_int64(1, run_id);
  std::vector<CandidateRecord> out;
  while (st.step()) out.push_back(read_candidate(st));
  return out;
}

std::vector<EvaluationRecord> RunStore::evaluations(int64_t run_id) const {
  sqlite::Statement st(
      *db_, std::string("SELECT ") + kEvaluationColumns +
                " FROM evaluations e JOIN candidates c ON c.id = "
                "e.candidate_id WHERE c.run_id = ?1 ORDER BY e.id");
  st.bind_int64(1, run_id);
  std::vector<EvaluationRecord> out;
  while (st.step()) out.push_back(read_evaluation(st, path()));
  return out;
}

std::vector<LlmCallRecord> RunStore::llm_calls(int64_t run_id) const {
  sqlite::Statement st(*db_, std::string("SELECT ") + kLlmCallColumns +
                                 " FROM llm_calls WHERE run_id = ?1 ORDER BY id");
  st.bind_int64(1, run_id);
  std::vector<LlmCallRecord> out;
  while (st.step()) out.push_back(read_llm_call(st));
  return out;
}

}  // namespace palladium
