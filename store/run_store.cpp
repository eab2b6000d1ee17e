#include "store/run_store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "store/content_hash.hpp"
#include "store/run_lock.hpp"
#include "store/schema_sql.hpp"
#include "store/sqlite.hpp"

namespace palladium {

namespace {

// Bump with any schema.sql change that needs more than IF NOT EXISTS and
// added nullable/defaulted columns.
constexpr int kSchemaVersion = 2;
// "PALD": marks the file as ours, so a foreign SQLite file is recognised
// before anything is written to it.
constexpr int64_t kApplicationId = 0x50414C44;

// How long a writer waits for another connection's lock before SQLITE_BUSY.
constexpr int kBusyTimeoutMs = 10000;

bool is_memory(const std::string& path) { return path == ":memory:"; }

std::string where(const sqlite::Db& db) { return "run store '" + db.path() + "'"; }

// The store, its file or its schema is not in a state to do this.
[[noreturn]] void fail(const sqlite::Db& db, const std::string& what) {
  throw StoreError(where(db) + ": " + what, Errc::failed_precondition);
}

// The caller asked for something that cannot be (an unknown id, a bad value).
[[noreturn]] void bad(const sqlite::Db& db, const std::string& what) {
  throw StoreError(where(db) + ": " + what, Errc::invalid_argument);
}

int64_t query_int(sqlite::Db& db, const std::string& sql) {
  sqlite::Statement st(db, sql);
  return st.step() ? st.int64(0) : 0;
}

// What the file at hand is, found by reading only.
void check_identity(sqlite::Db& db, bool* is_new) {
  const int64_t app_id = query_int(db, "PRAGMA application_id");
  const int64_t version = query_int(db, "PRAGMA user_version");
  const int64_t objects = query_int(db, "SELECT count(*) FROM sqlite_master");
  *is_new = false;
  if (app_id == kApplicationId) {
    if (version == kSchemaVersion) return;
    if (version > kSchemaVersion) {
      fail(db, "schema version " + std::to_string(version) + " is newer than this build's " +
                   std::to_string(kSchemaVersion) + "; use a newer palladium");
    }
    fail(db, "unknown schema version " + std::to_string(version) + " (this build reads " +
                 std::to_string(kSchemaVersion) + ")");
  }
  if (app_id == 0 && version == 0 && objects == 0) {
    *is_new = true;
    return;
  }
  if (app_id == 0 && version == 1 &&
      query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                    "name IN ('runs', 'candidates', 'evaluations', 'llm_calls')") == 4) {
    fail(db,
         "schema version 1, written by an older palladium; this build reads version " +
             std::to_string(kSchemaVersion) +
             " only and leaves the file untouched. Start the run again into a new database "
             "(--db NEW.db), or read this one with the palladium that wrote it");
  }
  char id[16];
  std::snprintf(id, sizeof id, "0x%08llx", static_cast<unsigned long long>(app_id));
  fail(db, "not a Palladium run store (application_id " + std::string(id) + ", user_version " +
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
        fail(db, "store/schema.sql adds column " + table + "." + column +
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

SampleRole parse_role(const sqlite::Db& db, const std::string& text, int64_t id) {
  auto role = sample_role_from_string(text);
  if (!role) fail(db, "sample " + std::to_string(id) + " has unknown role '" + text + "'");
  return *role;
}

Phase parse_phase(const sqlite::Db& db, const std::string& text, int64_t id) {
  auto phase = phase_from_string(text);
  if (!phase) fail(db, "sample " + std::to_string(id) + " has unknown phase '" + text + "'");
  return *phase;
}

// -- samples ---------------------------------------------------------------

// The columns read_sample() expects, for FROM samples s with its texts
// joined (the `_TEXTS` variant) or without (texts read as '').
#define PALLADIUM_SAMPLE_COLUMNS                                                              \
  "s.id, s.run_id, s.workload, s.method, s.seed, s.sample_index, s.role, s.phase, "           \
  "s.generation, s.parent_id, s.plan_id, s.score, s.response_id, s.prompt_hash, s.code_hash, " \
  "s.superseded, s.created_at, "                                                               \
  "(SELECT finish_reason FROM llm_responses WHERE id = s.response_id), "
#define PALLADIUM_SAMPLE_TEXTS                                                                 \
  PALLADIUM_SAMPLE_COLUMNS                                                                     \
  "(SELECT text FROM blobs WHERE hash = s.plan_hash), "                                        \
  "(SELECT text FROM blobs WHERE hash = s.system_hash), "                                      \
  "(SELECT text FROM blobs WHERE hash = s.user_hash), "                                        \
  "(SELECT text FROM blobs WHERE hash = s.response_hash), "                                    \
  "(SELECT text FROM blobs WHERE hash = s.code_hash) FROM samples s "
#define PALLADIUM_SAMPLE_NO_TEXTS PALLADIUM_SAMPLE_COLUMNS "'', '', '', '', '' FROM samples s "

SampleRecord read_sample(const sqlite::Db& db, const sqlite::Statement& st) {
  SampleRecord s;
  s.id = st.int64(0);
  s.run_id = st.int64(1);
  s.workload = st.text(2);
  s.method = st.text(3);
  s.seed = st.int64(4);
  s.sample_index = static_cast<int>(st.int64(5));
  s.role = parse_role(db, st.text(6), s.id);
  s.phase = parse_phase(db, st.text(7), s.id);
  s.generation = static_cast<int>(st.int64(8));
  s.parent_id = st.opt_int64(9);
  s.plan_id = st.opt_int64(10);
  s.score = st.opt_double(11);
  s.response_id = st.opt_int64(12);
  s.prompt_hash = st.text(13);
  s.code_hash = st.text(14);
  s.superseded = st.int64(15) != 0;
  s.created_at = st.text(16);
  s.finish_reason = st.text(17);
  s.plan = st.text(18);
  s.prompt_system = st.text(19);
  s.prompt_user = st.text(20);
  s.response = st.text(21);
  s.code = st.text(22);
  return s;
}

// -- evaluations -------------------------------------------------------------

// The columns every evaluations table has that are not the evaluation's own.
constexpr const char* kEvaluationColumns =
    "e.id, e.candidate_id, e.speedup, e.agent_id, e.agent_key, e.backend, e.device_kind, "
    "e.jax_version, e.libtpu_version, e.attempts, e.structure_json, e.created_at";
constexpr int kEvaluationFixedColumns = 12;

// Columns added after databases were written without them, with the value such a row reads: a
// read-only open never migrates (add_missing_columns), so its SELECT names what is there. The
// evaluation's own columns (protocol/judge_pipe.json) read as NULL, which is the field's default.
constexpr std::pair<const char*, const char*> kLaterEvaluationColumns[] = {
    {"plausibility", "''"}, {"retiming_json", "'{}'"}, {"cross_check_json", "'{}'"},
    {"needs_reevaluation", "0"}};
constexpr int kLaterEvaluationColumnCount = 4;

std::string evaluation_columns(const sqlite::Db& db) {
  std::set<std::string> have;
  sqlite::Statement cols(db, "SELECT name FROM pragma_table_info('evaluations')");
  while (cols.step()) have.insert(cols.text(0));
  std::string out = kEvaluationColumns;
  for (const auto& [column, value] : kLaterEvaluationColumns)
    out += std::string(", ") + (have.count(column) ? std::string("e.") + column : value);
  Evaluation none;
  visit_fields(none, [&](const FieldSpec& spec, const auto&) {
    const std::string column(spec.column);
    out += ", " + (have.count(column) ? "e." + column : std::string("NULL"));
  });
  return out;
}

// One evaluation field from its column; NULL (a database from before the column) leaves the
// field's default. A spelling the taxonomy does not know is a corrupt row.
struct ColumnReader {
  const sqlite::Db& db;
  const sqlite::Statement& st;
  int64_t row;
  int column;

  template <typename E, typename Parse>
  void enumerated(std::optional<E>* out, Parse parse, const FieldSpec& spec) {
    const std::string text = st.text(column);
    if (text.empty()) return out->reset();
    *out = parse(text);
    if (!*out) bad_value(spec, text);
  }
  [[noreturn]] void bad_value(const FieldSpec& spec, const std::string& text) {
    fail(db, "evaluation " + std::to_string(row) + " has unknown " + std::string(spec.column) +
                 " '" + text + "'");
  }
  void read(const FieldSpec&, int* out) {
    if (!st.is_null(column)) *out = static_cast<int>(st.int64(column));
  }
  void read(const FieldSpec&, std::string* out) {
    if (!st.is_null(column)) *out = st.text(column);
  }
  void read(const FieldSpec&, std::optional<double>* out) { *out = st.opt_double(column); }
  void read(const FieldSpec&, std::optional<std::string>* out) {
    if (st.is_null(column))
      out->reset();
    else
      *out = st.text(column);
  }
  void read(const FieldSpec&, std::optional<bool>* out) {
    if (auto v = st.opt_int64(column)) *out = *v != 0;
    else out->reset();
  }
  void read(const FieldSpec& spec, std::vector<int64_t>* out) {
    if (st.is_null(column)) return;
    try {
      *out = nlohmann::json::parse(st.text(column)).get<std::vector<int64_t>>();
    } catch (const nlohmann::json::exception& ex) {
      fail(db, "evaluation " + std::to_string(row) + " has malformed " + std::string(spec.column) +
                   ": " + ex.what());
    }
  }
  void read(const FieldSpec& spec, std::map<std::string, double>* out) {
    if (st.is_null(column)) return;
    try {
      *out = nlohmann::json::parse(st.text(column)).get<std::map<std::string, double>>();
    } catch (const nlohmann::json::exception& ex) {
      fail(db, "evaluation " + std::to_string(row) + " has malformed " + std::string(spec.column) +
                   ": " + ex.what());
    }
  }
  void read(const FieldSpec& spec, Verdict* out) {
    const std::string text = st.text(column);
    auto v = verdict_from_string(text);
    if (!v) bad_value(spec, text);
    *out = *v;
  }
  void read(const FieldSpec& spec, std::optional<Stage>* out) {
    enumerated(out, stage_from_string, spec);
  }
  void read(const FieldSpec& spec, std::optional<TimingKind>* out) {
    enumerated(out, timing_kind_from_string, spec);
  }
  void read(const FieldSpec& spec, std::optional<NumericsPath>* out) {
    enumerated(out, numerics_path_from_string, spec);
  }
};

EvaluationRecord read_evaluation(const sqlite::Db& db, const sqlite::Statement& st) {
  EvaluationRecord e;
  e.id = st.int64(0);
  e.candidate_id = st.int64(1);
  e.speedup = st.opt_double(2);
  e.agent.agent_id = st.text(3);
  e.agent.agent_key = st.text(4);
  e.agent.backend = st.text(5);
  e.agent.device_kind = st.text(6);
  e.agent.jax_version = st.text(7);
  e.agent.libtpu_version = st.text(8);
  e.agent.dispatches = static_cast<int>(st.int64(9));
  e.structure_json = st.text(10);
  e.created_at = st.text(11);
  e.checks.plausibility = st.text(kEvaluationFixedColumns);
  e.checks.retiming_json = st.text(kEvaluationFixedColumns + 1);
  e.checks.cross_check_json = st.text(kEvaluationFixedColumns + 2);
  e.needs_reevaluation = st.int64(kEvaluationFixedColumns + 3) != 0;
  ColumnReader reader{db, st, e.id, kEvaluationFixedColumns + kLaterEvaluationColumnCount};
  visit_fields(e.evaluation, [&](const FieldSpec& spec, auto& value) {
    reader.read(spec, &value);
    ++reader.column;
  });
  return e;
}

// The INSERT of one evaluations row: the columns beside the evaluation (?1-?13), then the
// evaluation's own, in visit_fields() order. A result from a key already quarantined is marked
// as it is written (needs_reevaluation, from ?4: the agent key). The first write wins, except
// over a row whose key was quarantined since: that row is replaced.
constexpr int kInsertFixedParameters = 13;
std::string insert_evaluation_sql() {
  std::vector<std::string> columns = {
      "candidate_id", "speedup",       "agent_id",       "agent_key",    "backend",
      "device_kind",  "jax_version",   "libtpu_version", "attempts",     "structure_json",
      "plausibility", "retiming_json", "cross_check_json"};
  std::string values;
  for (int i = 1; i <= kInsertFixedParameters; ++i)
    values += (i > 1 ? ", ?" : "?") + std::to_string(i);
  int index = kInsertFixedParameters + 1;
  Evaluation none;
  visit_fields(none, [&](const FieldSpec& spec, const auto&) {
    columns.emplace_back(spec.column);
    values += ", ?" + std::to_string(index++);
  });
  std::string names, update;
  for (const auto& column : columns) {
    names += column + ", ";
    if (column != "candidate_id") update += column + " = excluded." + column + ", ";
  }
  return "INSERT INTO evaluations (" + names + "needs_reevaluation) VALUES (" + values +
         ", ?4 != '' AND EXISTS (SELECT 1 FROM quarantined_keys q WHERE q.agent_key = ?4)) "
         "ON CONFLICT (candidate_id) DO UPDATE SET " + update +
         "needs_reevaluation = excluded.needs_reevaluation, "
         "created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
         "WHERE evaluations.needs_reevaluation = 1";
}

// One evaluation field as its column stores it: enums by their spelling ('' when absent),
// lists and maps as JSON, bools as 0/1, absent optionals as NULL.
void bind_value(sqlite::Statement& st, int index, int value) { st.bind_int64(index, value); }
void bind_value(sqlite::Statement& st, int index, const std::string& value) {
  st.bind_text(index, value);
}
void bind_value(sqlite::Statement& st, int index, const std::optional<double>& value) {
  st.bind_opt_double(index, value);
}
void bind_value(sqlite::Statement& st, int index, const std::optional<bool>& value) {
  if (value)
    st.bind_int64(index, *value ? 1 : 0);
  else
    st.bind_null(index);
}
void bind_value(sqlite::Statement& st, int index, const std::vector<int64_t>& value) {
  st.bind_text(index, nlohmann::json(value).dump());
}
void bind_value(sqlite::Statement& st, int index, const std::map<std::string, double>& value) {
  st.bind_text(index, nlohmann::json(value).dump());
}
void bind_value(sqlite::Statement& st, int index, Verdict value) {
  st.bind_text(index, to_string(value));
}
void bind_value(sqlite::Statement& st, int index, const std::optional<std::string>& value) {
  if (value)
    st.bind_text(index, *value);
  else
    st.bind_null(index);
}
template <typename E>
void bind_value(sqlite::Statement& st, int index, const std::optional<E>& value) {
  st.bind_text(index, spelling(value));
}

// -- LLM -------------------------------------------------------------------

constexpr const char* kLlmCallColumns =
    "id, run_id, provider, model, role, samples, status, error_code, error_text, http_status, "
    "prompt_tokens, completion_tokens, thinking_tokens, tokens_estimated, latency_ms, cost_usd, "
    "batch_id, created_at, cached_prompt_tokens, cache_saved_usd, prompt_estimate";

LlmCallRecord read_llm_call(const sqlite::Db& db, const sqlite::Statement& st) {
  LlmCallRecord c;
  c.id = st.int64(0);
  c.run_id = st.opt_int64(1);
  c.provider = st.text(2);
  c.model = st.text(3);
  auto role = sample_role_from_string(st.text(4));
  if (!role) fail(db, "llm call " + std::to_string(c.id) + " has unknown role '" + st.text(4) + "'");
  c.role = *role;
  c.samples = static_cast<int>(st.int64(5));
  c.status = st.text(6);
  c.error_code = st.text(7);
  c.error_text = st.text(8);
  c.http_status = static_cast<int>(st.int64(9));
  c.prompt_tokens = st.int64(10);
  c.completion_tokens = st.int64(11);
  c.thinking_tokens = st.int64(12);
  c.tokens_estimated = st.int64(13) != 0;
  c.latency_ms = st.real(14);
  c.cost_usd = st.opt_double(15);
  c.batch_id = st.text(16);
  c.created_at = st.text(17);
  c.cached_prompt_tokens = st.int64(18);
  c.cache_saved_usd = st.opt_double(19);
  c.prompt_estimate = st.int64(20);
  return c;
}

#define PALLADIUM_RESPONSE_SELECT                                                              \
  "SELECT r.id, r.provider, r.model, r.params_json, r.sample_index, r.seed, "                  \
  "(SELECT text FROM blobs WHERE hash = r.system_hash), "                                      \
  "(SELECT text FROM blobs WHERE hash = r.user_hash), "                                        \
  "(SELECT text FROM blobs WHERE hash = r.response_hash), r.model_reported, r.finish_reason, " \
  "r.prompt_tokens, r.completion_tokens, r.thinking_tokens, r.tokens_estimated, r.latency_ms, " \
  "r.cost_usd, r.batch_id, r.call_id, r.prompt_hash, r.params_hash, r.created_at, "           \
  "r.cached_prompt_tokens FROM llm_responses r "

LlmResponseRecord read_response(const sqlite::Statement& st) {
  LlmResponseRecord r;
  r.id = st.int64(0);
  r.provider = st.text(1);
  r.model = st.text(2);
  r.params_json = st.text(3);
  r.sample_index = static_cast<int>(st.int64(4));
  r.seed = st.int64(5);
  r.prompt_system = st.text(6);
  r.prompt_user = st.text(7);
  r.text = st.text(8);
  r.model_reported = st.text(9);
  r.finish_reason = st.text(10);
  r.prompt_tokens = st.int64(11);
  r.completion_tokens = st.int64(12);
  r.thinking_tokens = st.int64(13);
  r.tokens_estimated = st.int64(14) != 0;
  r.latency_ms = st.real(15);
  r.cost_usd = st.opt_double(16);
  r.batch_id = st.text(17);
  r.call_id = st.opt_int64(18);
  r.prompt_hash = st.text(19);
  r.params_hash = st.text(20);
  r.created_at = st.text(21);
  r.cached_prompt_tokens = st.int64(22);
  return r;
}

RunRecord read_run(const sqlite::Statement& st) {
  RunRecord r;
  r.id = st.int64(0);
  r.name = st.text(1);
  r.config_text = st.text(2);
  r.config_hash = st.text(3);
  r.cell_id = st.opt_int64(4);
  r.started_at = st.text(5);
  r.finished_at = st.opt_text(6);
  r.status = st.text(7);
  r.status_reason = st.text(8);
  return r;
}

constexpr const char* kRunSelect =
    "SELECT id, name, config_text, config_hash, cell_id, started_at, finished_at, status, "
    "status_reason FROM runs ";

CellRecord read_cell(const sqlite::Statement& st) {
  CellRecord c;
  c.id = st.int64(0);
  c.sweep_id = st.int64(1);
  c.cell_key = st.text(2);
  c.ordinal = static_cast<int>(st.int64(3));
  c.params_json = st.text(4);
  c.config_text = st.text(5);
  c.created_at = st.text(6);
  return c;
}

constexpr const char* kCellSelect =
    "SELECT id, sweep_id, cell_key, ordinal, params_json, config_text, created_at FROM cells ";

int64_t last_rowid(const sqlite::Db& db) { return sqlite3_last_insert_rowid(db.handle()); }
int changes(const sqlite::Db& db) { return sqlite3_changes(db.handle()); }

}  // namespace

ResponseKey response_key(const std::string& provider, const std::string& model,
                         const std::string& system_prompt, const std::string& user_prompt,
                         const std::string& params_json, int sample_index, int64_t seed) {
  return {provider, model, prompt_hash(system_prompt, user_prompt), sha256_hex(params_json),
          sample_index, seed};
}

ResponseKey LlmResponseRecord::key() const {
  return response_key(provider, model, prompt_system, prompt_user, params_json, sample_index,
                      seed);
}

// A write: its own transaction, or a savepoint inside the open one (the
// batch, or the write this one is part of).
class RunStore::WriteScope {
 public:
  WriteScope(RunStore& store, const char* what) {
    if (store.db_->read_only()) fail(*store.db_, std::string(what) + ": opened read-only");
    if (!sqlite3_get_autocommit(store.db_->handle())) {
      savepoint_.emplace(*store.db_);
    } else {
      transaction_.emplace(*store.db_);
    }
  }
  void commit() {
    if (savepoint_) savepoint_->release();
    if (transaction_) transaction_->commit();
  }

 private:
  std::optional<sqlite::Savepoint> savepoint_;
  std::optional<sqlite::Transaction> transaction_;
};

std::unique_ptr<RunStore> RunStore::open(const std::string& path, Mode mode) {
  Options options;
  options.mode = mode;
  return open(path, options);
}

std::unique_ptr<RunStore> RunStore::open(const std::string& path, const Options& options) {
  const bool memory = is_memory(path);
  const bool read_only = options.mode == Mode::read_only;
  if (read_only && !memory && !std::filesystem::is_regular_file(path)) {
    throw StoreError("run store '" + path + "': no such database file");
  }
  auto db = std::make_unique<sqlite::Db>(
      path, read_only ? sqlite::Db::Mode::read_only : sqlite::Db::Mode::read_write);
  // Errors below already name the path (Db::exec / describe / fail).
  sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);
  db->set_statement_cache(options.cache_statements);

  // Nothing is written before the file is known to be ours (or empty).
  bool is_new = false;
  check_identity(*db, &is_new);
  if (read_only) {
    if (is_new) fail(*db, "empty file, not a Palladium run store");
    db->exec("PRAGMA query_only=ON");
    return std::unique_ptr<RunStore>(new RunStore(std::move(db), nullptr));
  }

  std::shared_ptr<RunLock> lock;
  bool took_lock = false;
  if (!memory) lock = RunLock::acquire(path, &took_lock);

  const std::string mode_text = db->query_text("PRAGMA journal_mode=WAL");
  if (mode_text != "wal" && !(memory && mode_text == "memory")) {
    fail(*db, "cannot enable WAL (journal_mode is '" + mode_text + "')");
  }
  // FULL: in WAL mode, one fsync of the log per commit, so a committed batch
  // survives a power loss too (docs/architecture.md, "Run store").
  db->exec(options.sync == Sync::full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  db->exec("PRAGMA foreign_keys=ON");

  sqlite::Transaction tx(*db);
  if (!is_new) add_missing_columns(*db);
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
  return std::unique_ptr<RunStore>(new RunStore(std::move(db), std::move(lock)));
}

RunStore::RunStore(std::unique_ptr<sqlite::Db> db, std::shared_ptr<RunLock> lock)
    : db_(std::move(db)), lock_(std::move(lock)) {
  const std::string select = "SELECT " + evaluation_columns(*db_);
  sql_search_evaluations_ = select +
                            " FROM evaluations e JOIN samples s ON s.id = e.candidate_id "
                            "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 AND "
                            "s.seed = ?4 AND s.superseded = 0 ORDER BY e.id";
  sql_find_evaluation_ = select + " FROM evaluations e WHERE e.candidate_id = ?1";
  sql_run_evaluations_ = select +
                         " FROM evaluations e JOIN samples s ON s.id = e.candidate_id "
                         "WHERE s.run_id = ?1 AND s.superseded = 0 ORDER BY e.id";
}

RunStore::~RunStore() {
  // An unfinished batch is not committed: its senders were never answered.
  if (batch_open_) sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

const std::string& RunStore::path() const { return db_->path(); }

bool RunStore::read_only() const { return db_->read_only(); }

std::optional<pid_t> RunStore::writer_pid() const {
  if (is_memory(path())) return std::nullopt;
  return RunLock::holder(path());
}

// -- group commit -------------------------------------------------------------

void RunStore::begin_batch() {
  if (read_only()) fail(*db_, "begin_batch: opened read-only");
  if (batch_open_) fail(*db_, "begin_batch: a batch is already open");
  sqlite::CachedUse(*db_, "BEGIN IMMEDIATE")->run();
  batch_open_ = true;
}

void RunStore::commit_batch() {
  if (!batch_open_) return;
  batch_open_ = false;
  try {
    sqlite::CachedUse(*db_, "COMMIT")->run();
  } catch (...) {
    sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void RunStore::rollback_batch() {
  if (!batch_open_) return;
  batch_open_ = false;
  sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

bool RunStore::in_batch() const { return batch_open_; }

// -- blobs -------------------------------------------------------------------

std::string RunStore::put_blob(const std::string& text) {
  WriteScope w(*this, "put_blob");
  std::string hash = write_blob(text);
  w.commit();
  return hash;
}

std::string RunStore::write_blob(const std::string& text) {
  std::string hash = sha256_hex(text);
  sqlite::CachedUse st(*db_,
                       "INSERT INTO blobs (hash, bytes, text) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (hash) DO NOTHING");
  st->bind_text(1, hash).bind_int64(2, static_cast<int64_t>(text.size())).bind_text(3, text);
  st->run();
  return hash;
}

std::optional<std::string> RunStore::blob(const std::string& hash) const {
  sqlite::CachedUse st(*db_, "SELECT text FROM blobs WHERE hash = ?1");
  st->bind_text(1, hash);
  if (!st->step()) return std::nullopt;
  return st->text(0);
}

// -- sweeps and cells -----------------------------------------------------------

int64_t RunStore::begin_or_resume_sweep(const std::string& name, const std::string& config_text) {
  WriteScope w(*this, "begin_or_resume_sweep");
  const std::string hash = sha256_hex(config_text);
  {
    sqlite::CachedUse st(*db_,
                         "INSERT INTO sweeps (name, config_text, config_hash) VALUES (?1, ?2, ?3) "
                         "ON CONFLICT (config_hash) DO NOTHING");
    st->bind_text(1, name).bind_text(2, config_text).bind_text(3, hash).run();
  }
  sqlite::CachedUse id(*db_, "SELECT id FROM sweeps WHERE config_hash = ?1");
  id->bind_text(1, hash);
  if (!id->step()) fail(*db_, "sweep vanished");
  const int64_t result = id->int64(0);
  w.commit();
  return result;
}

std::optional<SweepRecord> RunStore::find_sweep(int64_t sweep_id) const {
  sqlite::CachedUse st(*db_,
                       "SELECT id, name, config_text, config_hash, created_at FROM sweeps "
                       "WHERE id = ?1");
  st->bind_int64(1, sweep_id);
  if (!st->step()) return std::nullopt;
  return SweepRecord{st->int64(0), st->text(1), st->text(2), st->text(3), st->text(4)};
}

std::vector<SweepRecord> RunStore::sweeps() const {
  sqlite::CachedUse st(*db_,
                       "SELECT id, name, config_text, config_hash, created_at FROM sweeps "
                       "ORDER BY id");
  std::vector<SweepRecord> out;
  while (st->step())
    out.push_back({st->int64(0), st->text(1), st->text(2), st->text(3), st->text(4)});
  return out;
}

int64_t RunStore::put_cell(const CellRecord& c) {
  WriteScope w(*this, "put_cell");
  if (!find_sweep(c.sweep_id)) bad(*db_, "put_cell: no sweep " + std::to_string(c.sweep_id));
  {
    sqlite::CachedUse st(*db_,
                         "INSERT INTO cells (sweep_id, cell_key, ordinal, params_json, "
                         "config_text) VALUES (?1, ?2, ?3, ?4, ?5) "
                         "ON CONFLICT (sweep_id, cell_key) DO NOTHING");
    st->bind_int64(1, c.sweep_id)
        .bind_text(2, c.cell_key)
        .bind_int64(3, c.ordinal)
        .bind_text(4, c.params_json)
        .bind_text(5, c.config_text)
        .run();
  }
  sqlite::CachedUse id(*db_, "SELECT id FROM cells WHERE sweep_id = ?1 AND cell_key = ?2");
  id->bind_int64(1, c.sweep_id).bind_text(2, c.cell_key);
  if (!id->step()) fail(*db_, "cell vanished");
  const int64_t result = id->int64(0);
  w.commit();
  return result;
}

std::optional<CellRecord> RunStore::find_cell(int64_t cell_id) const {
  static const std::string sql = std::string(kCellSelect) + "WHERE id = ?1";
  sqlite::CachedUse st(*db_, sql.c_str());
  st->bind_int64(1, cell_id);
  if (!st->step()) return std::nullopt;
  return read_cell(*st);
}

std::vector<CellRecord> RunStore::cells(int64_t sweep_id) const {
  static const std::string sql = std::string(kCellSelect) + "WHERE sweep_id = ?1 ORDER BY ordinal, id";
  sqlite::CachedUse st(*db_, sql.c_str());
  st->bind_int64(1, sweep_id);
  std::vector<CellRecord> out;
  while (st->step()) out.push_back(read_cell(*st));
  return out;
}

// -- runs ----------------------------------------------------------------------

int64_t RunStore::begin_or_resume_run(const std::string& name, const std::string& config_text,
                                      std::optional<int64_t> cell_id) {
  WriteScope w(*this, "begin_or_resume_run");
  if (cell_id && !find_cell(*cell_id)) {
    bad(*db_, "begin_or_resume_run: no cell " + std::to_string(*cell_id));
  }
  const std::string hash = sha256_hex(config_text);
  std::optional<int64_t> id;
  {
    sqlite::CachedUse find(*db_, "SELECT max(id) FROM runs WHERE config_hash = ?1 AND cell_id IS ?2");
    find->bind_text(1, hash).bind_opt_int64(2, cell_id);
    if (find->step()) id = find->opt_int64(0);
  }
  if (id) {
    sqlite::CachedUse resume(*db_,
                             "UPDATE runs SET status = 'running', finished_at = NULL, "
                             "status_reason = '' WHERE id = ?1");
    resume->bind_int64(1, *id).run();
  } else {
    sqlite::CachedUse insert(*db_,
                             "INSERT INTO runs (name, config_text, config_hash, cell_id) "
                             "VALUES (?1, ?2, ?3, ?4)");
    insert->bind_text(1, name).bind_text(2, config_text).bind_text(3, hash).bind_opt_int64(4, cell_id);
    insert->run();
    id = last_rowid(*db_);
  }
  w.commit();
  return *id;
}

void RunStore::finish_run(int64_t run_id, const std::string& status, const std::string& reason) {
  if (std::none_of(std::begin(kRunStatuses), std::end(kRunStatuses),
                   [&](const char* s) { return status == s; })) {
    bad(*db_, "finish_run: unknown status '" + status + "' for run " + std::to_string(run_id));
  }
  WriteScope w(*this, "finish_run");
  sqlite::CachedUse st(*db_,
                       "UPDATE runs SET status = ?1, status_reason = ?2, finished_at = "
                       "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?3");
  st->bind_text(1, status).bind_text(2, reason).bind_int64(3, run_id).run();
  if (changes(*db_) != 1) bad(*db_, "finish_run: no run " + std::to_string(run_id));
  w.commit();
}

std::optional<RunRecord> RunStore::find_run(int64_t run_id) const {
  static const std::string sql = std::string(kRunSelect) + "WHERE id = ?1";
  sqlite::CachedUse st(*db_, sql.c_str());
  st->bind_int64(1, run_id);
  if (!st->step()) return std::nullopt;
  return read_run(*st);
}

std::vector<RunRecord> RunStore::runs() const {
  static const std::string sql = std::string(kRunSelect) + "ORDER BY id";
  sqlite::CachedUse st(*db_, sql.c_str());
  std::vector<RunRecord> out;
  while (st->step()) out.push_back(read_run(*st));
  return out;
}

std::optional<int64_t> RunStore::latest_run_id() const {
  sqlite::CachedUse st(*db_, "SELECT max(id) FROM runs");
  if (!st->step()) return std::nullopt;
  return st->opt_int64(0);
}

// -- samples -------------------------------------------------------------------

PutSampleResult RunStore::put_sample(const SampleRecord& s) {
  WriteScope w(*this, "put_sample");
  const std::string what = "put_sample (run " + std::to_string(s.run_id) + ", " + s.workload +
                           ", " + s.method + ", seed " + std::to_string(s.seed) + ", sample " +
                           std::to_string(s.sample_index) + ")";
  const std::string prompt = prompt_hash(s.prompt_system, s.prompt_user);
  PutSampleResult result;
  {
    sqlite::CachedUse live(*db_,
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
      if (live->text(1) == prompt) return result;  // nothing written; w rolls back nothing
      result.superseded_id = result.id;
    }
  }
  if (result.superseded_id) {
    sqlite::CachedUse st(*db_, "UPDATE samples SET superseded = 1 WHERE id = ?1");
    st->bind_int64(1, *result.superseded_id).run();
  }
  const std::string system_hash = write_blob(s.prompt_system);
  const std::string user_hash = write_blob(s.prompt_user);
  const std::string response_hash = write_blob(s.response);
  const std::string code_hash = write_blob(s.code);
  const std::string plan_hash = write_blob(s.plan);
  try {
    sqlite::CachedUse st(*db_,
                         "INSERT INTO samples (run_id, workload, method, seed, sample_index, "
                         "role, phase, generation, parent_id, plan_id, plan_hash, score, "
                         "prompt_hash, system_hash, user_hash, response_hash, code_hash, "
                         "response_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                         "?12, ?13, ?14, ?15, ?16, ?17, ?18)");
    st->bind_int64(1, s.run_id)
        .bind_text(2, s.workload)
        .bind_text(3, s.method)
        .bind_int64(4, s.seed)
        .bind_int64(5, s.sample_index)
        .bind_text(6, to_string(s.role))
        .bind_text(7, to_string(s.phase))
        .bind_int64(8, s.generation)
        .bind_opt_int64(9, s.parent_id)
        .bind_opt_int64(10, s.plan_id)
        .bind_text(11, plan_hash)
        .bind_opt_double(12, s.score)
        .bind_text(13, prompt)
        .bind_text(14, system_hash)
        .bind_text(15, user_hash)
        .bind_text(16, response_hash)
        .bind_text(17, code_hash)
        .bind_opt_int64(18, s.response_id);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError(what + ": " + e.what() + " (unknown run, parent, plan or response?)",
                     e.code());
  }
  result.id = last_rowid(*db_);
  result.inserted = true;
  w.commit();
  return result;
}

PutSampleResult RunStore::put_generated_sample(SampleRecord sample, LlmCallRecord call,
                                               LlmResponseRecord response) {
  WriteScope w(*this, "put_generated_sample");
  response.call_id = put_llm_call(call);
  sample.response_id = put_response(response).id;
  PutSampleResult result = put_sample(sample);
  w.commit();
  return result;
}

std::optional<SampleRecord> RunStore::find_sample(const SampleKey& k) const {
  sqlite::CachedUse st(*db_, "SELECT " PALLADIUM_SAMPLE_TEXTS
                             "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 AND "
                             "s.seed = ?4 AND s.sample_index = ?5 AND s.superseded = 0");
  st->bind_int64(1, k.run_id)
      .bind_text(2, k.workload)
      .bind_text(3, k.method)
      .bind_int64(4, k.seed)
      .bind_int64(5, k.sample_index);
  if (!st->step()) return std::nullopt;
  return read_sample(*db_, *st);
}

std::optional<SampleRecord> RunStore::find_sample(int64_t sample_id) const {
  sqlite::CachedUse st(*db_, "SELECT " PALLADIUM_SAMPLE_TEXTS "WHERE s.id = ?1");
  st->bind_int64(1, sample_id);
  if (!st->step()) return std::nullopt;
  return read_sample(*db_, *st);
}

StoredSearch RunStore::search_samples(const SampleKey& k) const {
  StoredSearch out;
  {
    sqlite::CachedUse st(*db_, "SELECT " PALLADIUM_SAMPLE_TEXTS
                               "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 AND "
                               "s.seed = ?4 AND s.superseded = 0 ORDER BY s.sample_index");
    st->bind_int64(1, k.run_id).bind_text(2, k.workload).bind_text(3, k.method).bind_int64(4, k.seed);
    while (st->step()) out.samples.push_back(read_sample(*db_, *st));
  }
  sqlite::CachedUse st(*db_, sql_search_evaluations_.c_str());
  st->bind_int64(1, k.run_id).bind_text(2, k.workload).bind_text(3, k.method).bind_int64(4, k.seed);
  while (st->step()) {
    // A result from a quarantined key is not reused: the resumed search evaluates it again.
    EvaluationRecord e = read_evaluation(*db_, *st);
    if (!e.needs_reevaluation) out.evaluations.push_back(std::move(e));
  }
  return out;
}

void RunStore::supersede_sample(int64_t sample_id) {
  WriteScope w(*this, "supersede_sample");
  sqlite::CachedUse st(*db_, "UPDATE samples SET superseded = 1 WHERE id = ?1");
  st->bind_int64(1, sample_id).run();
  if (changes(*db_) != 1) bad(*db_, "supersede_sample: no sample " + std::to_string(sample_id));
  w.commit();
}

std::vector<SampleRecord> RunStore::samples(int64_t run_id, Texts texts,
                                            bool include_superseded) const {
  const char* sql = nullptr;
  if (texts == Texts::all) {
    sql = include_superseded
              ? "SELECT " PALLADIUM_SAMPLE_TEXTS "WHERE s.run_id = ?1 ORDER BY s.id"
              : "SELECT " PALLADIUM_SAMPLE_TEXTS
                "WHERE s.run_id = ?1 AND s.superseded = 0 ORDER BY s.id";
  } else {
    sql = include_superseded
              ? "SELECT " PALLADIUM_SAMPLE_NO_TEXTS "WHERE s.run_id = ?1 ORDER BY s.id"
              : "SELECT " PALLADIUM_SAMPLE_NO_TEXTS
                "WHERE s.run_id = ?1 AND s.superseded = 0 ORDER BY s.id";
  }
  sqlite::CachedUse st(*db_, sql);
  st->bind_int64(1, run_id);
  std::vector<SampleRecord> out;
  while (st->step()) out.push_back(read_sample(*db_, *st));
  return out;
}

std::vector<SampleRecord> RunStore::candidates(int64_t run_id, Texts texts) const {
  const char* sql = texts == Texts::all
                        ? "SELECT " PALLADIUM_SAMPLE_TEXTS
                          "WHERE s.run_id = ?1 AND s.superseded = 0 AND s.role IN ('code', "
                          "'repair') ORDER BY s.id"
                        : "SELECT " PALLADIUM_SAMPLE_NO_TEXTS
                          "WHERE s.run_id = ?1 AND s.superseded = 0 AND s.role IN ('code', "
                          "'repair') ORDER BY s.id";
  sqlite::CachedUse st(*db_, sql);
  st->bind_int64(1, run_id);
  std::vector<SampleRecord> out;
  while (st->step()) out.push_back(read_sample(*db_, *st));
  return out;
}

// -- evaluations -----------------------------------------------------------------

bool RunStore::put_evaluation(const EvaluationRecord& e) {
  WriteScope w(*this, "put_evaluation");
  {
    sqlite::CachedUse role(*db_, "SELECT role FROM samples WHERE id = ?1");
    role->bind_int64(1, e.candidate_id);
    if (!role->step()) {
      bad(*db_, "put_evaluation: no sample " + std::to_string(e.candidate_id));
    }
    const std::string r = role->text(0);
    if (r != to_string(SampleRole::code) && r != to_string(SampleRole::repair)) {
      bad(*db_, "put_evaluation: sample " + std::to_string(e.candidate_id) + " has role '" + r +
                     "', not a candidate (code or repair)");
    }
  }
  static const std::string sql = insert_evaluation_sql();
  sqlite::CachedUse st(*db_, sql.c_str());
  const AgentFacts& agent = e.agent;
  st->bind_int64(1, e.candidate_id)
      .bind_opt_double(2, speedup(e.evaluation))
      .bind_text(3, agent.agent_id)
      .bind_text(4, agent.agent_key)
      .bind_text(5, agent.backend)
      .bind_text(6, agent.device_kind)
      .bind_text(7, agent.jax_version)
      .bind_text(8, agent.libtpu_version)
      .bind_int64(9, std::max(1, agent.dispatches))
      .bind_text(10, e.structure_json)
      .bind_text(11, e.checks.plausibility)
      .bind_text(12, e.checks.retiming_json)
      .bind_text(13, e.checks.cross_check_json);
  int index = kInsertFixedParameters + 1;
  visit_fields(e.evaluation, [&](const FieldSpec&, const auto& value) {
    bind_value(*st, index++, value);
  });
  st->run();
  const bool inserted = changes(*db_) == 1;
  w.commit();
  return inserted;
}

bool RunStore::put_evaluation(int64_t candidate_id, const Evaluated& evaluated) {
  EvaluationRecord row;
  row.candidate_id = candidate_id;
  row.evaluation = evaluated.evaluation;
  row.agent = evaluated.agent;
  row.checks = evaluated.checks;
  return put_evaluation(row);
}

std::optional<EvaluationRecord> RunStore::find_evaluation(int64_t candidate_id) const {
  sqlite::CachedUse st(*db_, sql_find_evaluation_.c_str());
  st->bind_int64(1, candidate_id);
  if (!st->step()) return std::nullopt;
  return read_evaluation(*db_, *st);
}

int64_t RunStore::put_quarantine(const QuarantineRecord& q) {
  WriteScope w(*this, "put_quarantine");
  sqlite::CachedUse st(*db_,
                       "INSERT INTO quarantined_keys (run_id, agent_key, agent_id, reason, job_id) "
                       "VALUES (?1, ?2, ?3, ?4, ?5) "
                       "ON CONFLICT (run_id, agent_key, agent_id) DO NOTHING");
  try {
    st->bind_int64(1, q.run_id)
        .bind_text(2, q.agent_key)
        .bind_text(3, q.agent_id)
        .bind_text(4, q.reason)
        .bind_int64(5, q.job_id)
        .run();
  } catch (const StoreError& e) {
    bad(*db_, "put_quarantine: run " + std::to_string(q.run_id) + ": " + e.what());
  }
  int64_t marked = 0;
  if (!q.agent_key.empty()) {
    sqlite::CachedUse mark(*db_,
                           "UPDATE evaluations SET needs_reevaluation = 1 "
                           "WHERE agent_key = ?1 AND needs_reevaluation = 0");
    mark->bind_text(1, q.agent_key).run();
    marked = changes(*db_);
  }
  w.commit();
  return marked;
}

std::vector<QuarantineRecord> RunStore::quarantines() const {
  std::vector<QuarantineRecord> out;
  {
    // A database written before quarantines existed has no table (a read-only open does not
    // migrate): it has none.
    sqlite::Statement has(*db_,
                          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                          "name = 'quarantined_keys'");
    if (!has.step()) return out;
  }
  sqlite::Statement st(*db_,
                       "SELECT q.id, q.run_id, q.agent_key, q.agent_id, q.reason, q.job_id, "
                       "q.created_at, (SELECT COUNT(*) FROM evaluations e WHERE q.agent_key != '' "
                       "AND e.agent_key = q.agent_key) FROM quarantined_keys q ORDER BY q.id");
  while (st.step()) {
    QuarantineRecord q;
    q.id = st.int64(0);
    q.run_id = st.int64(1);
    q.agent_key = st.text(2);
    q.agent_id = st.text(3);
    q.reason = st.text(4);
    q.job_id = st.int64(5);
    q.created_at = st.text(6);
    q.evaluations = st.int64(7);
    out.push_back(std::move(q));
  }
  return out;
}

std::vector<EvaluationRecord> RunStore::evaluations(int64_t run_id) const {
  sqlite::CachedUse st(*db_, sql_run_evaluations_.c_str());
  st->bind_int64(1, run_id);
  std::vector<EvaluationRecord> out;
  while (st->step()) out.push_back(read_evaluation(*db_, *st));
  return out;
}

// -- side-by-side re-timings -----------------------------------------------------------

int64_t RunStore::put_sitting(const SittingRecord& s) {
  WriteScope w(*this, "put_sitting");
  if (s.kernels.empty()) bad(*db_, "put_sitting: run " + std::to_string(s.run_id) + " workload " +
                                       s.workload + ": a sitting without kernels");
  int64_t number = 0;
  {
    sqlite::CachedUse next(*db_, "SELECT COALESCE(MAX(sitting), 0) + 1 FROM sittings");
    next->step();
    number = next->int64(0);
  }
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const SittingKernel& k = s.kernels[i];
    sqlite::CachedUse st(*db_,
                         "INSERT INTO sittings (sitting, run_id, workload, method, seed, position, "
                         "candidate_id, kernel_ms, kernel_ms_low, kernel_ms_high, baseline_ms, "
                         "baseline_ms_low, baseline_ms_high, timing_runs, timing_kind, agent_key, "
                         "error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                         "?14, ?15, ?16, ?17)");
    try {
      st->bind_int64(1, number)
          .bind_int64(2, s.run_id)
          .bind_text(3, s.workload)
          .bind_text(4, s.method)
          .bind_int64(5, s.seed)
          .bind_int64(6, static_cast<int64_t>(i))
          .bind_int64(7, k.candidate_id)
          .bind_opt_double(8, k.kernel_ms)
          .bind_opt_double(9, k.kernel_ms_low)
          .bind_opt_double(10, k.kernel_ms_high)
          .bind_opt_double(11, s.baseline_ms)
          .bind_opt_double(12, s.baseline_ms_low)
          .bind_opt_double(13, s.baseline_ms_high)
          .bind_int64(14, s.timing_runs)
          .bind_text(15, s.timing_kind)
          .bind_text(16, s.agent_key)
          .bind_text(17, s.error)
          .run();
    } catch (const StoreError& e) {
      bad(*db_, "put_sitting: run " + std::to_string(s.run_id) + " candidate " +
                    std::to_string(k.candidate_id) + ": " + e.what());
    }
  }
  w.commit();
  return number;
}

std::vector<SittingRecord> RunStore::sittings(int64_t run_id) const {
  std::vector<SittingRecord> out;
  {
    // A read-only open of a database made before re-timings does not migrate: it has none.
    sqlite::Statement has(*db_,
                          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sittings'");
    if (!has.step()) return out;
  }
  sqlite::Statement st(*db_,
                       "SELECT sitting, workload, method, seed, candidate_id, kernel_ms, "
                       "kernel_ms_low, kernel_ms_high, baseline_ms, baseline_ms_low, "
                       "baseline_ms_high, timing_runs, timing_kind, agent_key, error "
                       "FROM sittings WHERE run_id = ?1 ORDER BY sitting, position");
  st.bind_int64(1, run_id);
  while (st.step()) {
    const int64_t number = st.int64(0);
    if (out.empty() || out.back().sitting != number) {
      SittingRecord s;
      s.sitting = number;
      s.run_id = run_id;
      s.workload = st.text(1);
      s.method = st.text(2);
      s.seed = st.int64(3);
      s.baseline_ms = st.opt_double(8);
      s.baseline_ms_low = st.opt_double(9);
      s.baseline_ms_high = st.opt_double(10);
      s.timing_runs = static_cast<int>(st.int64(11));
      s.timing_kind = st.text(12);
      s.agent_key = st.text(13);
      s.error = st.text(14);
      out.push_back(std::move(s));
    }
    out.back().kernels.push_back(
        SittingKernel{st.int64(4), st.opt_double(5), st.opt_double(6), st.opt_double(7)});
  }
  return out;
}

// -- LLM calls and responses -----------------------------------------------------------

int64_t RunStore::put_llm_call(const LlmCallRecord& c) {
  WriteScope w(*this, "put_llm_call");
  if (c.status != "ok" && c.status != "error") {
    bad(*db_, "put_llm_call: status must be 'ok' or 'error', not '" + c.status + "'");
  }
  try {
    sqlite::CachedUse st(*db_,
                         "INSERT INTO llm_calls (run_id, provider, model, role, samples, status, "
                         "error_code, error_text, http_status, prompt_tokens, completion_tokens, "
                         "thinking_tokens, tokens_estimated, latency_ms, cost_usd, batch_id, "
                         "cached_prompt_tokens, cache_saved_usd, prompt_estimate) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                         "?15, ?16, ?17, ?18, ?19)");
    st->bind_opt_int64(1, c.run_id)
        .bind_text(2, c.provider)
        .bind_text(3, c.model)
        .bind_text(4, to_string(c.role))
        .bind_int64(5, c.samples)
        .bind_text(6, c.status)
        .bind_text(7, c.error_code)
        .bind_text(8, c.error_text)
        .bind_int64(9, c.http_status)
        .bind_int64(10, c.prompt_tokens)
        .bind_int64(11, c.completion_tokens)
        .bind_int64(12, c.thinking_tokens)
        .bind_int64(13, c.tokens_estimated ? 1 : 0)
        .bind_double(14, c.latency_ms)
        .bind_opt_double(15, c.cost_usd)
        .bind_text(16, c.batch_id)
        .bind_int64(17, c.cached_prompt_tokens)
        .bind_opt_double(18, c.cache_saved_usd)
        .bind_int64(19, c.prompt_estimate);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError("put_llm_call (run " + (c.run_id ? std::to_string(*c.run_id) : "none") +
                         "): " + e.what(),
                     e.code());
  }
  const int64_t id = last_rowid(*db_);
  w.commit();
  return id;
}

std::vector<LlmCallRecord> RunStore::llm_calls(int64_t run_id) const {
  static const std::string sql =
      std::string("SELECT ") + kLlmCallColumns + " FROM llm_calls WHERE run_id = ?1 ORDER BY id";
  sqlite::CachedUse st(*db_, sql.c_str());
  st->bind_int64(1, run_id);
  std::vector<LlmCallRecord> out;
  while (st->step()) out.push_back(read_llm_call(*db_, *st));
  return out;
}

std::vector<std::string> RunStore::models(int64_t run_id) const {
  sqlite::CachedUse st(
      *db_,
      "SELECT model FROM ("
      "SELECT model, 0 AS k, MIN(id) AS o FROM llm_calls WHERE run_id = ?1 GROUP BY model "
      "UNION ALL SELECT r.model, 1, MIN(r.id) FROM samples s "
      "JOIN llm_responses r ON r.id = s.response_id WHERE s.run_id = ?1 AND s.superseded = 0 "
      "AND s.role IN ('code', 'repair') GROUP BY r.model) ORDER BY k, o");
  st->bind_int64(1, run_id);
  std::vector<std::string> out;
  while (st->step()) {
    std::string model = st->text(0);
    if (std::find(out.begin(), out.end(), model) == out.end()) out.push_back(std::move(model));
  }
  return out;
}

std::vector<LlmAttribution> RunStore::llm_attribution(int64_t run_id) const {
  // A sample's answer was paid by this run when the call that fetched it belongs to the run.
  sqlite::CachedUse st(
      *db_,
      "SELECT s.workload, COUNT(*), "
      "SUM(c.run_id IS ?1), SUM(c.run_id IS NOT ?1), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.prompt_tokens ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.completion_tokens + r.thinking_tokens ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE r.prompt_tokens END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE r.completion_tokens + r.thinking_tokens END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN COALESCE(r.cost_usd, 0) ELSE 0 END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN 0 ELSE COALESCE(r.cost_usd, 0) END), "
      "SUM(CASE WHEN c.run_id IS ?1 THEN r.cached_prompt_tokens ELSE 0 END), "
      "SUM(r.finish_reason IN ('length', 'MAX_TOKENS')) "
      "FROM samples s JOIN llm_responses r ON r.id = s.response_id "
      "LEFT JOIN llm_calls c ON c.id = r.call_id "
      "WHERE s.run_id = ?1 AND s.superseded = 0 GROUP BY s.workload ORDER BY s.workload");
  st->bind_int64(1, run_id);
  std::vector<LlmAttribution> out;
  while (st->step()) {
    LlmAttribution a;
    a.workload = st->text(0);
    a.answers = st->int64(1);
    a.paid_answers = st->int64(2);
    a.reused_answers = st->int64(3);
    a.paid_prompt_tokens = st->int64(4);
    a.paid_output_tokens = st->int64(5);
    a.reused_prompt_tokens = st->int64(6);
    a.reused_output_tokens = st->int64(7);
    a.paid_usd = st->real(8);
    a.reused_usd = st->real(9);
    a.cached_prompt_tokens = st->int64(10);
    a.truncated = st->int64(11);
    out.push_back(std::move(a));
  }
  return out;
}

PutResponseResult RunStore::put_response(const LlmResponseRecord& r) {
  WriteScope w(*this, "put_response");
  const ResponseKey k = r.key();
  {
    sqlite::CachedUse found(*db_,
                            "SELECT id FROM llm_responses WHERE provider = ?1 AND model = ?2 AND "
                            "prompt_hash = ?3 AND params_hash = ?4 AND sample_index = ?5 AND "
                            "seed = ?6");
    found->bind_text(1, k.provider)
        .bind_text(2, k.model)
        .bind_text(3, k.prompt_hash)
        .bind_text(4, k.params_hash)
        .bind_int64(5, k.sample_index)
        .bind_int64(6, k.seed);
    if (found->step()) return {found->int64(0), false};
  }
  const std::string system_hash = write_blob(r.prompt_system);
  const std::string user_hash = write_blob(r.prompt_user);
  const std::string response_hash = write_blob(r.text);
  try {
    sqlite::CachedUse st(*db_,
                         "INSERT INTO llm_responses (provider, model, prompt_hash, params_hash, "
                         "sample_index, seed, params_json, system_hash, user_hash, response_hash, "
                         "model_reported, finish_reason, prompt_tokens, completion_tokens, "
                         "thinking_tokens, tokens_estimated, latency_ms, cost_usd, batch_id, "
                         "call_id, cached_prompt_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                         "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)");
    st->bind_text(1, k.provider)
        .bind_text(2, k.model)
        .bind_text(3, k.prompt_hash)
        .bind_text(4, k.params_hash)
        .bind_int64(5, k.sample_index)
        .bind_int64(6, k.seed)
        .bind_text(7, r.params_json)
        .bind_text(8, system_hash)
        .bind_text(9, user_hash)
        .bind_text(10, response_hash)
        .bind_text(11, r.model_reported)
        .bind_text(12, r.finish_reason)
        .bind_int64(13, r.prompt_tokens)
        .bind_int64(14, r.completion_tokens)
        .bind_int64(15, r.thinking_tokens)
        .bind_int64(16, r.tokens_estimated ? 1 : 0)
        .bind_double(17, r.latency_ms)
        .bind_opt_double(18, r.cost_usd)
        .bind_text(19, r.batch_id)
        .bind_opt_int64(20, r.call_id)
        .bind_int64(21, r.cached_prompt_tokens);
    st->run();
  } catch (const StoreError& e) {
    throw StoreError("put_response (" + r.provider + ", " + r.model + "): " + e.what() +
                         " (unknown call?)",
                     e.code());
  }
  const int64_t id = last_rowid(*db_);
  w.commit();
  return {id, true};
}

PutAnsweredCallResult RunStore::put_answered_call(const LlmCallRecord& call,
                                                 std::vector<LlmResponseRecord> responses) {
  WriteScope w(*this, "put_answered_call");
  PutAnsweredCallResult out;
  out.call_id = put_llm_call(call);
  for (auto& r : responses) {
    r.call_id = out.call_id;
    out.responses.push_back(put_response(r));
  }
  w.commit();
  return out;
}

std::optional<LlmResponseRecord> RunStore::find_response(const ResponseKey& k) const {
  sqlite::CachedUse st(*db_, PALLADIUM_RESPONSE_SELECT
                       "WHERE r.provider = ?1 AND r.model = ?2 AND r.prompt_hash = ?3 AND "
                       "r.params_hash = ?4 AND r.sample_index = ?5 AND r.seed = ?6");
  st->bind_text(1, k.provider)
      .bind_text(2, k.model)
      .bind_text(3, k.prompt_hash)
      .bind_text(4, k.params_hash)
      .bind_int64(5, k.sample_index)
      .bind_int64(6, k.seed);
  if (!st->step()) return std::nullopt;
  return read_response(*st);
}

std::optional<LlmResponseRecord> RunStore::find_response(int64_t response_id) const {
  sqlite::CachedUse st(*db_, PALLADIUM_RESPONSE_SELECT "WHERE r.id = ?1");
  st->bind_int64(1, response_id);
  if (!st->step()) return std::nullopt;
  return read_response(*st);
}

}  // namespace palladium
