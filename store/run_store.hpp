// RunStore: the persistent record of sweeps, runs, samples, evaluations and
// LLM calls and responses, in one SQLite database (schema v3:
// store/schema.sql, which documents every table and column). Each table's
// record and its columns are declared once in store/<table>_table.hpp.
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
// read-write open migrates a schema-v2 store to v3 (each run's and cell's
// method, model label and suite, read once from its stored config); a
// read-only one reads it as if migrated. A read-write open takes the
// database's RunLock (store/run_lock.hpp): one
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
#include "store/cells_table.hpp"
#include "store/evaluations_table.hpp"
#include "store/llm_calls_table.hpp"
#include "store/llm_responses_table.hpp"
#include "store/quarantines_table.hpp"
#include "store/runs_table.hpp"
#include "store/samples_table.hpp"
#include "store/sittings_table.hpp"
#include "store/store_error.hpp"
#include "store/sweeps_table.hpp"

namespace palladium {

namespace store {
class Database;
}  // namespace store

// Everything stored for one search: its live samples (with texts) in
// sample-index order and the evaluations of its live candidates.
struct StoredSearch {
  std::vector<SampleRecord> samples;
  std::vector<EvaluationRecord> evaluations;
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
  explicit RunStore(std::unique_ptr<store::Database> db);
  // The evaluations of one search's live candidates (search_samples' second read).
  std::vector<EvaluationRecord> search_evaluations(const SampleKey& search) const;

  // Open, lock, migrations and batches (store/database.hpp); each table's statements are in
  // its own file (store/<table>_table.cpp).
  std::unique_ptr<store::Database> db_;
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_STORE_HPP_
