// RunStore: the persistent record of runs, candidates, evaluations and LLM
// calls, in one SQLite database (schema: store/schema.sql).
//
// Writes are idempotent on the natural keys, so a run killed at any moment
// and started again with the same config finds what it already paid for:
//   - a run is identified by the hash of its config text;
//   - a candidate by (run_id, workload, method, seed, sample_index);
//   - an evaluation by its candidate.
// Repeating a write returns the existing row and changes nothing (the first
// write wins; content is not compared).
//
// The database runs in WAL mode with foreign keys on and a busy timeout, so
// other processes (palladium report/status) may read while a run writes.
// Every write is its own transaction (BEGIN IMMEDIATE ... COMMIT) and is
// durable when the call returns.
//
// Hashes (config_hash, code_hash) are 64-bit FNV-1a as 16 lowercase hex
// digits (search/fnv1a.hpp): enough to group identical text, not a
// cryptographic digest.
//
// Errors: every method throws StoreError (store/store_error.hpp) on failure;
// a failed write leaves the database unchanged.
//
// Thread safety: none. A RunStore has one owner, the store actor; do not
// share one between threads.

#ifndef PALLADIUM_STORE_RUN_STORE_HPP_
#define PALLADIUM_STORE_RUN_STORE_HPP_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "search/verdict.hpp"
#include "store/store_error.hpp"

namespace palladium {

namespace sqlite {
class Db;
}  // namespace sqlite

struct RunRecord {
  int64_t id = 0;
  std::string name;
  std::string config_text;
  std::string config_hash;
  std::string started_at;                  // ISO-8601 UTC
  std::optional<std::string> finished_at;  // unset while running
  std::string status;                      // "running", then finish_run's
};

// Fields marked "store" are filled in by the store and ignored on insert.
struct CandidateRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::string workload;
  std::string method;  // e.g. "iterative", "iterative_context"
  int64_t seed = 0;
  int sample_index = 0;
  std::optional<int64_t> parent_id;  // candidate whose feedback was used
  std::string prompt_system;
  std::string prompt_user;
  std::string response;    // raw LLM response
  std::string code;        // extracted code; "" when there was none
  std::string code_hash;   // store: fnv1a64_hex(code)
  std::string created_at;  // store
};

struct EvaluationRecord {
  int64_t id = 0;  // store
  int64_t candidate_id = 0;
  Verdict verdict = Verdict::no_code;
  std::string stage;
  std::string error_text;
  std::string error_signature;
  std::string stdout_text;  // the candidate's captured stdout
  std::string stderr_text;  // the candidate's captured stderr
  std::string stage_ms_json = "{}";  // {"stage": ms, ...}
  std::optional<double> max_abs_err;
  std::optional<double> max_rel_err;
  std::optional<double> kernel_ms;
  std::optional<double> baseline_ms;
  // baseline_ms / kernel_ms for a correct candidate (EvalOutcome::speedup());
  // the report reads this column as is.
  std::optional<double> speedup;
  std::string timing_kind;  // "cpu-wall", "tpu-profiler" or ""
  std::string agent_id;
  std::string backend;  // "interpret" or "tpu"
  int attempts = 1;     // dispatches it took (requeues + 1)
  std::string created_at;  // store
};

struct LlmCallRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::optional<int64_t> candidate_id;  // unset for a failed call
  std::string provider;
  std::string model;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  bool tokens_estimated = false;
  double latency_ms = 0.0;
  std::string created_at;  // store
};

class RunStore {
 public:
  // Opens or creates the database at `path` (":memory:" works, without
  // WAL), applies the schema and the pragmas. Throws StoreError naming
  // `path` if it cannot be opened, is not a Palladium store of a known
  // schema version, or cannot switch to WAL.
  static std::unique_ptr<RunStore> open(const std::string& path);

  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // The id of the run whose config hash equals that of `config_text`
  // (the latest such run), now marked "running" again with finished_at
  // cleared; or a new run. `name` is only used for a new run.
  int64_t begin_or_resume_run(const std::string& name,
                              const std::string& config_text);

  // Marks the run finished with `status` (e.g. "finished", "failed",
  // "interrupted") at the current time. Throws StoreError for an unknown id.
  void finish_run(int64_t run_id, const std::string& status);

  std::optional<RunRecord> find_run(int64_t run_id) const;

  // The highest run id, or nullopt for an empty store.
  std::optional<int64_t> latest_run_id() const;

  // Inserts the candidate and returns its id; if one already exists on
  // (run_id, workload, method, seed, sample_index), returns that id and
  // writes nothing. Throws StoreError for an unknown run or parent.
  int64_t insert_candidate(const CandidateRecord& candidate);

  std::optional<CandidateRecord> find_candidate(int64_t run_id,
                                                const std::string& workload,
                                                const std::string& method,
                                                int64_t seed,
                                                int sample_index) const;

  // Inserts the evaluation and returns true; returns false and writes
  // nothing if the candidate already has one. Throws StoreError for an
  // unknown candidate.
  bool insert_evaluation(const EvaluationRecord& evaluation);

  std::optional<EvaluationRecord> find_evaluation(int64_t candidate_id) const;

  // Appends one LLM call (not deduplicated: every call is paid for) and
  // returns its id. Throws StoreError for an unknown run or candidate.
  int64_t insert_llm_call(const LlmCallRecord& call);

  // All rows of a run, in insertion (id) order. Empty for an unknown run.
  std::vector<CandidateRecord> candidates(int64_t run_id) const;
  std::vector<EvaluationRecord> evaluations(int64_t run_id) const;
  std::vector<LlmCallRecord> llm_calls(int64_t run_id) const;

  const std::string& path() const;

 private:
  explicit RunStore(std::unique_ptr<sqlite::Db> db);

  std::unique_ptr<sqlite::Db> db_;
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_STORE_HPP_
