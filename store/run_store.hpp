// RunStore: the persistent record of sweeps, runs, samples, evaluations and
// LLM calls and responses, in one SQLite database (schema v2:
// store/schema.sql, which documents every table and column).
//
// Writes are idempotent on natural keys, so a run killed at any moment and
// started again with the same config finds what it already paid for:
//   - a run by (its config text's hash, its cell); a sweep by its config's
//     hash; a cell by (sweep, cell key);
//   - a sample by (run, workload, method, seed, sample index) AND its
//     prompt: the same prompt finds the stored sample, a changed prompt
//     supersedes it (resume identity includes the prompt);
//   - an evaluation by its candidate;
//   - an LLM response by (provider, model, prompt hash, sampling-parameters
//     hash, sample index, seed): the response cache, shared by every run and
//     sweep cell of the database.
// Repeating a write returns the existing row and changes nothing (the first
// write wins; content is not compared). Texts are stored once each, keyed by
// SHA-256 (store/content_hash.hpp).
//
// Opening. open() refuses, before it changes a single byte, a file that is
// not a Palladium store (another application's SQLite database), a
// schema-v1 store (named as such, with what to do) and a newer schema. A
// read-write open takes the database's RunLock (store/run_lock.hpp): one
// writing process per database, the holder's pid named in the refusal.
// Having the lock, it marks every run still 'running' as 'interrupted':
// their process is gone, since it no longer holds the lock. A read-only
// open (reports, status) takes no lock and cannot write, even by mistake.
//
// Durability. WAL journal with synchronous=FULL (the default; see
// Options::sync): a write is on disk, not only in the OS cache, when its
// transaction commits. Outside a batch every
// write is its own transaction, committed when the call returns. Between
// begin_batch() and commit_batch() writes share one transaction (group
// commit: one fsync for many rows) and each is made atomic on its own by a
// savepoint, so a failed write undoes only itself; none of the batch is
// durable before commit_batch() returns. The store actor
// (actors/store_actor.hpp) batches and answers its senders only after the
// commit. Statements are prepared once per connection and cached.
//
// Readers (report/status in other processes) may read while a run writes;
// they see committed batches only.
//
// Errors: every method throws StoreError (store/store_error.hpp) naming the
// database and the offending ids; a failed write leaves the database (or the
// open batch) as it was. Writes on a read-only store throw StoreError.
//
// Thread safety: none. A RunStore has one owner at a time, usually the store
// actor. Several RunStores of one database in one process are fine (each its
// own connection; they share the lock).

#ifndef PALLADIUM_STORE_RUN_STORE_HPP_
#define PALLADIUM_STORE_RUN_STORE_HPP_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "protocol/evaluation.hpp"
#include "protocol/taxonomy.hpp"
#include "store/store_error.hpp"

namespace palladium {

namespace sqlite {
class Db;
}  // namespace sqlite
class RunLock;

// Fields marked "store" are filled in by the store and ignored on writes.

struct SweepRecord {
  int64_t id = 0;  // store
  std::string name;
  std::string config_text;
  std::string config_hash;  // store: sha256_hex(config_text)
  std::string created_at;   // store
};

struct CellRecord {
  int64_t id = 0;  // store
  int64_t sweep_id = 0;
  std::string cell_key;  // stable id from the grid expansion; unique per sweep
  int ordinal = 0;       // position in the expanded grid
  std::string params_json = "{}";
  std::string config_text;
  std::string created_at;  // store
};

struct RunRecord {
  int64_t id = 0;
  std::string name;
  std::string config_text;
  std::string config_hash;  // sha256_hex(config_text)
  std::optional<int64_t> cell_id;
  std::string started_at;                  // ISO-8601 UTC
  std::optional<std::string> finished_at;  // unset while running
  std::string status;                      // "running", then finish_run's
  std::string status_reason;
};

// The statuses finish_run accepts.
inline constexpr const char* kRunStatuses[] = {"finished", "incomplete", "interrupted",
                                               "failed", "stopped"};

struct SampleKey {
  int64_t run_id = 0;
  std::string workload;
  std::string method;
  int64_t seed = 0;
  int sample_index = 0;
};

// One request a search made and what came back. Candidates are the samples
// with role code or repair.
struct SampleRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::string workload;
  std::string method;  // e.g. "iterative", "iterative_context", "autocomp"
  int64_t seed = 0;
  int sample_index = 0;
  SampleRole role = SampleRole::code;
  Phase phase = Phase::iterate;
  int generation = 1;                // the method's step (beam iteration)
  std::optional<int64_t> parent_id;  // the sample built on or judged
  std::optional<int64_t> plan_id;    // the plan sample implemented
  std::string plan;                  // that plan's text; "" for none
  std::optional<double> score;       // role score: the rating it gave
  std::string prompt_system;
  std::string prompt_user;
  std::string response;                // raw LLM response
  std::string code;                    // extracted code; "" when none
  std::optional<int64_t> response_id;  // its llm_responses row, if cached
  std::string finish_reason;  // store (read only): its llm_responses row's; "" if none
  std::string prompt_hash;  // store: prompt_hash(prompt_system, prompt_user)
  std::string code_hash;    // store: sha256_hex(code)
  bool superseded = false;  // store
  std::string created_at;   // store

  SampleKey key() const { return {run_id, workload, method, seed, sample_index}; }
};

struct PutSampleResult {
  int64_t id = 0;       // the live sample at the key
  bool inserted = false;  // false: an identical-prompt sample was there
  // The sample this write superseded (same key, different prompt).
  std::optional<int64_t> superseded_id;
};

// One evaluations row: the candidate, what the judge found (Evaluation, whose fields and columns
// protocol/judge_pipe.json lists), the agent that found it (AgentFacts) and what the
// coordinator's checks concluded (CheckFindings), plus what the store adds.
struct EvaluationRecord {
  int64_t id = 0;  // store
  int64_t candidate_id = 0;  // a code or repair sample
  Evaluation evaluation;
  AgentFacts agent;
  // baseline_ms / kernel_ms for a correct candidate (speedup(Evaluation)): computed when the row
  // is written; the report reads this column as is.
  std::optional<double> speedup;
  std::string structure_json = "{}";  // further structural figures
  // The dispatcher's result checks: plausibility, re-timing, cross-check.
  CheckFindings checks;
  std::string created_at;  // store
  // Whether its key was quarantined since (then a resumed run evaluates the candidate again).
  // The store sets it itself from quarantined_keys; the writer's value is ignored.
  bool needs_reevaluation = false;
};

// One side-by-side re-timing of a search's best kernels (table sittings): each kernel's median
// and band, and the baseline's, from one sitting on one slot. `error` set: not held (no times).
struct SittingKernel {
  int64_t candidate_id = 0;
  std::optional<double> kernel_ms, kernel_ms_low, kernel_ms_high;
};
struct SittingRecord {
  int64_t sitting = 0;  // store
  int64_t run_id = 0;
  std::string workload;
  std::string method;
  int64_t seed = 0;
  std::vector<SittingKernel> kernels;  // best by the evaluations first
  std::optional<double> baseline_ms, baseline_ms_low, baseline_ms_high;
  int timing_runs = 0;
  std::string timing_kind;
  std::string agent_key;
  std::string error;
};

// A key the dispatcher quarantined during run `run_id` (actors/eval_dispatcher.hpp).
struct QuarantineRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::string agent_key;  // "" on a plaintext link: its results cannot be traced by key
  std::string agent_id;
  std::string reason;
  int64_t job_id = 0;
  std::string created_at;  // store
  int64_t evaluations = 0;  // store, on read: evaluations in the database sent by this key
};

// Everything stored for one search: its live samples (with texts) in
// sample-index order and the evaluations of its live candidates.
struct StoredSearch {
  std::vector<SampleRecord> samples;
  std::vector<EvaluationRecord> evaluations;
};

// One LLM request as sent (ok or failed), with the API's own usage.
struct LlmCallRecord {
  int64_t id = 0;  // store
  std::optional<int64_t> run_id;  // unset when it served several runs
  std::string provider;
  std::string model;
  SampleRole role = SampleRole::code;
  int samples = 1;            // responses asked for (n)
  std::string status = "ok";  // "ok" or "error"
  std::string error_code;     // protocol/errc.hpp spelling; "" if ok
  std::string error_text;     // must hold no secret
  int http_status = 0;        // 0 when not HTTP
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  bool tokens_estimated = false;
  double latency_ms = 0.0;
  std::optional<double> cost_usd;
  std::string batch_id;     // provider batch job; "" online
  std::string created_at;   // store
  int64_t cached_prompt_tokens = 0;     // of prompt_tokens, from the provider's prompt cache
  std::optional<double> cache_saved_usd;  // what the cache hit saved; unset: no price
  int64_t prompt_estimate = 0;          // Palladium's chars/4 estimate of the prompt
};

// The cache key of one LLM response; response_key() builds it from texts.
struct ResponseKey {
  std::string provider;
  std::string model;
  std::string prompt_hash;  // prompt_hash(system, user)
  std::string params_hash;  // sha256_hex(params_json)
  int sample_index = 0;
  int64_t seed = 0;
};

ResponseKey response_key(const std::string& provider, const std::string& model,
                         const std::string& system_prompt, const std::string& user_prompt,
                         const std::string& params_json, int sample_index, int64_t seed);

struct LlmResponseRecord {
  int64_t id = 0;  // store
  std::string provider;
  std::string model;  // the model asked for
  // Canonical sampling parameters (e.g. nlohmann::json::dump() of an
  // object, whose keys are sorted): equal parameters must give equal text.
  std::string params_json = "{}";
  int sample_index = 0;
  int64_t seed = 0;
  std::string prompt_system;
  std::string prompt_user;
  std::string text;            // the response
  std::string model_reported;  // the model as the API named it
  std::string finish_reason;   // "stop", "length", ...; "" unknown
  int64_t prompt_tokens = 0;   // this response's share of its call
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  bool tokens_estimated = false;
  double latency_ms = 0.0;
  std::optional<double> cost_usd;
  std::string batch_id;
  std::optional<int64_t> call_id;  // the llm_calls row that fetched it
  int64_t cached_prompt_tokens = 0;  // this response's share of the call's cached tokens
  std::string prompt_hash;  // store
  std::string params_hash;  // store
  std::string created_at;   // store

  ResponseKey key() const;
};

// A run's LLM usage split by who paid, per workload (RunStore::llm_attribution): answers
// this run's own calls fetched ("paid"), and answers it reused from the shared cache, which
// the run (or cell) that first asked paid for. A cell's cost is then the same whatever order
// the cells ran in: paid + reused is what it would have cost alone.
struct LlmAttribution {
  std::string workload;
  int64_t answers = 0;
  int64_t paid_answers = 0, reused_answers = 0;
  int64_t paid_prompt_tokens = 0, paid_output_tokens = 0;
  int64_t reused_prompt_tokens = 0, reused_output_tokens = 0;
  double paid_usd = 0, reused_usd = 0;  // reused: what the payer's call cost for these answers
  int64_t cached_prompt_tokens = 0;     // of paid_prompt_tokens, served by the prompt cache
  int64_t truncated = 0;                // answers cut off at the output limit
};

struct PutResponseResult {
  int64_t id = 0;
  bool inserted = false;  // false: the key was already cached
};

// What put_answered_call stored: the call's row and, per response in the
// order given, what put_response would have returned.
struct PutAnsweredCallResult {
  int64_t call_id = 0;
  std::vector<PutResponseResult> responses;
};

class RunStore {
 public:
  enum class Mode {
    read_write,  // creates the file if missing; takes the RunLock
    read_only,   // the file must be a Palladium store; no lock, no writes
  };

  enum class Sync {
    // Every commit fsyncs the WAL: a committed write survives a power loss.
    full,
    // No fsync per commit: a committed write survives the process dying
    // (SIGKILL, a crash) but a power loss or OS crash may undo the last
    // commits (never half of one). For benchmarks and throwaway databases:
    // it breaks "an acknowledged write is on disk".
    normal,
  };

  struct Options {
    Mode mode = Mode::read_write;
    Sync sync = Sync::full;
    // false re-prepares every statement on every use, as schema v1's store
    // did: only for `palladium bench store` to measure what the cache saves.
    bool cache_statements = true;
  };

  // Opens (read_write: or creates) the store at `path` (":memory:" works,
  // without WAL and lock). Throws StoreError naming `path` if it cannot be
  // opened, is not a Palladium store, has another schema version, is locked
  // by another process (read_write), or cannot switch to WAL.
  static std::unique_ptr<RunStore> open(const std::string& path, const Options& options);
  static std::unique_ptr<RunStore> open(const std::string& path, Mode mode = Mode::read_write);

  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;
  bool read_only() const;

  // The pid of the process holding this database's RunLock (this one, when
  // opened read-write), or nullopt when no process writes it: then a run
  // whose status is still "running" was killed.
  std::optional<pid_t> writer_pid() const;

  // -- group commit -------------------------------------------------------
  // Opens a batch: the writes that follow share one transaction. Throws
  // StoreError if one is already open.
  void begin_batch();
  // Commits the batch; its writes are durable when this returns. On failure
  // the whole batch is rolled back and StoreError thrown. No-op if none.
  void commit_batch();
  // Undoes every write of the open batch. No-op if none.
  void rollback_batch();
  bool in_batch() const;

  // -- sweeps and cells ---------------------------------------------------
  // The sweep with this config text, or a new one. `name` is used only for
  // a new sweep.
  int64_t begin_or_resume_sweep(const std::string& name, const std::string& config_text);
  std::optional<SweepRecord> find_sweep(int64_t sweep_id) const;
  std::vector<SweepRecord> sweeps() const;
  // Inserts the cell and returns its id, or the id of the cell already at
  // (sweep_id, cell_key). Throws StoreError for an unknown sweep.
  int64_t put_cell(const CellRecord& cell);
  std::optional<CellRecord> find_cell(int64_t cell_id) const;
  std::vector<CellRecord> cells(int64_t sweep_id) const;  // by ordinal

  // -- runs ---------------------------------------------------------------
  // The latest run with this config text and cell (none: outside a sweep),
  // now marked "running" again with finished_at and reason cleared; or a new
  // run. `name` is only used for a new run. Throws StoreError for an unknown
  // cell.
  int64_t begin_or_resume_run(const std::string& name, const std::string& config_text,
                              std::optional<int64_t> cell_id = std::nullopt);

  // Marks the run ended with `status` (one of kRunStatuses) and `reason` at
  // the current time. Throws StoreError for an unknown id or status.
  void finish_run(int64_t run_id, const std::string& status, const std::string& reason = "");

  std::optional<RunRecord> find_run(int64_t run_id) const;
  std::vector<RunRecord> runs() const;  // by id
  // The highest run id, or nullopt for an empty store.
  std::optional<int64_t> latest_run_id() const;

  // -- samples ------------------------------------------------------------
  // Stores the sample. If a live sample holds its key with the same prompt,
  // returns that one and writes nothing; with a different prompt, marks
  // that one superseded and inserts this one. Throws StoreError for an
  // unknown run, parent, plan or response.
  PutSampleResult put_sample(const SampleRecord& sample);

  // A generated sample with what it cost, in one atomic write: appends
  // `call`, caches `response` (call_id := the call; the first response under
  // its key wins), then put_sample(sample) with response_id := that
  // response. The call is kept even when the sample was already stored: it
  // was paid for.
  PutSampleResult put_generated_sample(SampleRecord sample, LlmCallRecord call,
                                       LlmResponseRecord response);

  // The live sample at `key`, with its texts.
  std::optional<SampleRecord> find_sample(const SampleKey& key) const;
  std::optional<SampleRecord> find_sample(int64_t sample_id) const;

  // What one search (the key's run, workload, method and seed; its
  // sample_index is ignored) has stored, in one read: what a resumed search
  // loads before it proposes anything.
  StoredSearch search_samples(const SampleKey& search) const;

  // Marks a sample superseded (reports and lookups then ignore it). Throws
  // StoreError for an unknown id.
  void supersede_sample(int64_t sample_id);

  // Whether listings load the texts (prompts, response, code, plan) or
  // leave them "" (hashes are always filled): a report over thousands of
  // samples needs ids and verdicts, not megabytes of prompts.
  enum class Texts { all, none };

  // The run's live samples of every role, by id (with superseded ones too
  // if asked).
  std::vector<SampleRecord> samples(int64_t run_id, Texts texts = Texts::all,
                                    bool include_superseded = false) const;
  // The run's live candidates (role code or repair), by id.
  std::vector<SampleRecord> candidates(int64_t run_id, Texts texts = Texts::all) const;

  // -- evaluations --------------------------------------------------------
  // Inserts the evaluation and returns true; returns false and writes
  // nothing if the candidate already has one. Throws StoreError for an
  // unknown sample.
  // A candidate whose evaluation is marked needs_reevaluation gets the new one instead: its
  // row is replaced (and true returned).
  bool put_evaluation(const EvaluationRecord& evaluation);
  // The row of `candidate_id` from one job's answer (the evaluation, the agent beside it and
  // the coordinator's check findings).
  bool put_evaluation(int64_t candidate_id, const Evaluated& evaluated);
  std::optional<EvaluationRecord> find_evaluation(int64_t candidate_id) const;
  // Records a quarantined key (once per run and key) and marks every evaluation it sent, in
  // any run, needs_reevaluation; returns how many were marked. A key of "" marks nothing.
  int64_t put_quarantine(const QuarantineRecord& quarantine);
  // Every quarantined key of the database, oldest first, with its evaluations counted.
  std::vector<QuarantineRecord> quarantines() const;
  // The evaluations of the run's live candidates, by id.
  std::vector<EvaluationRecord> evaluations(int64_t run_id) const;
  // Stores one side-by-side re-timing (its rows numbered by a fresh `sitting`); returns that
  // number. Throws StoreError for no kernels or an unknown run or candidate.
  int64_t put_sitting(const SittingRecord& sitting);
  // The run's re-timings, oldest first (none in a database made before they existed).
  std::vector<SittingRecord> sittings(int64_t run_id) const;

  // -- LLM calls and the response cache -------------------------------------
  // Appends one call (never deduplicated: every call may be billed).
  // Throws StoreError for an unknown run.
  int64_t put_llm_call(const LlmCallRecord& call);
  std::vector<LlmCallRecord> llm_calls(int64_t run_id) const;
  // The models whose answers the run's live candidates hold: those of its own calls in
  // first-call order, then those of cached responses it reused (a run served wholly from the
  // cache paid for no call, yet its answers still name a model).
  std::vector<std::string> models(int64_t run_id) const;
  // Per workload of `run_id`, its live samples' answers split into paid and reused (see
  // LlmAttribution), in workload order.
  std::vector<LlmAttribution> llm_attribution(int64_t run_id) const;

  // Caches a response; the first response stored under a key wins. Throws
  // StoreError for an unknown call.
  PutResponseResult put_response(const LlmResponseRecord& response);
  // The call and the responses it paid for, in one transaction (each
  // response's call_id is set to the new row): a crash never leaves a paid
  // call without its answers, which a resume would then pay for again.
  // Throws StoreError as put_llm_call and put_response do; nothing is
  // written then.
  PutAnsweredCallResult put_answered_call(const LlmCallRecord& call,
                                          std::vector<LlmResponseRecord> responses);
  std::optional<LlmResponseRecord> find_response(const ResponseKey& key) const;
  std::optional<LlmResponseRecord> find_response(int64_t response_id) const;

  // -- blobs --------------------------------------------------------------
  // Stores `text` once and returns sha256_hex(text).
  std::string put_blob(const std::string& text);
  std::optional<std::string> blob(const std::string& hash) const;

 private:
  RunStore(std::unique_ptr<sqlite::Db> db, std::shared_ptr<RunLock> lock);
  class WriteScope;
  // put_blob's insert, inside the caller's WriteScope.
  std::string write_blob(const std::string& text);

  std::unique_ptr<sqlite::Db> db_;
  std::shared_ptr<RunLock> lock_;  // null when read-only or in memory
  bool batch_open_ = false;
  // The evaluation queries, naming the columns this database has (built once, so the
  // statement cache keys on stable text).
  std::string sql_search_evaluations_, sql_find_evaluation_, sql_run_evaluations_;
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_STORE_HPP_
