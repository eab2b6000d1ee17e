// store actor: the only writer of the run database, with group commit.
//
// SQLite allows one writer at a time, and every write must be durable
// before its sender acts on it, so all writes funnel through this one actor,
// a thin shell over RunStore (store/run_store.hpp). It runs detached because
// SQLite calls block on disk I/O.
//
// Group commit. The first write after a commit opens a batch (one
// transaction) and queues a commit_atom to itself behind everything already
// in its mailbox; every message handled before that commit_atom joins the
// batch. The batch commits when the commit_atom comes up, or as soon as it
// holds `max_batch` writes. So under light load each write commits at once,
// and under heavy load one fsync covers many rows, with no timer and no
// added latency. Each write is atomic on its own (a savepoint): a failing
// write answers its sender with an error and leaves the batch intact.
//
// Durability contract: a reply to a write (or to a read handled while a
// batch is open, which may see that batch's rows) is sent only after the
// batch has committed, so a reply always describes durable state. If the
// commit fails, every sender in the batch gets the error and nothing of the
// batch is stored.
//
// Errors: caf::error from actors/errors.hpp carrying StoreError's Errc
// (store/store_error.hpp), so a caller can tell a busy database (aborted,
// retryable) from a broken constraint (invalid_argument).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "store/run_store.hpp"

namespace palladium {

using find_sample_atom = caf::atom_constant<caf::atom("findsample")>;
using load_search_atom = caf::atom_constant<caf::atom("loadsearch")>;
using put_sample_atom = caf::atom_constant<caf::atom("putsample")>;
using find_eval_atom = caf::atom_constant<caf::atom("find_eval")>;
using put_eval_atom = caf::atom_constant<caf::atom("put_eval")>;
using find_response_atom = caf::atom_constant<caf::atom("find_resp")>;
using put_call_atom = caf::atom_constant<caf::atom("put_call")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using store_stats_atom = caf::atom_constant<caf::atom("st_stats")>;
using begin_run_atom = caf::atom_constant<caf::atom("begin_run")>;
using commit_atom = caf::atom_constant<caf::atom("commit")>;
using put_quarantine_atom = caf::atom_constant<caf::atom("put_quar")>;
using put_sitting_atom = caf::atom_constant<caf::atom("put_sit")>;

struct MaybeSample {
  std::optional<SampleRecord> record;
};

struct MaybeEvaluation {
  std::optional<EvaluationRecord> record;
};

struct MaybeResponse {
  std::optional<LlmResponseRecord> record;
};

// What the store actor has done so far (for benchmarks and tests).
struct StoreStats {
  int64_t writes = 0;         // write messages handled
  int64_t failed_writes = 0;  // of which answered with an error
  int64_t commits = 0;        // batches committed
  int64_t largest_batch = 0;  // most writes in one commit
  double thread_cpu_ms = 0;   // CPU time of the actor's (detached) thread so far
};

// The store actor's contract. Each message maps to the RunStore method of
// the same meaning (see store/run_store.hpp for semantics and idempotence):
//   (find_sample_atom, SampleKey)                  -> MaybeSample    find_sample
//   (load_search_atom, SampleKey)                  -> StoredSearch   search_samples
//   (put_sample_atom, SampleRecord)                -> PutSampleResult put_sample
//   (put_sample_atom, SampleRecord, LlmCallRecord, LlmResponseRecord)
//                                                  -> PutSampleResult put_generated_sample
//   (find_eval_atom, int64_t candidate_id)         -> MaybeEvaluation find_evaluation
//   (put_eval_atom, EvaluationRecord)              -> bool           put_evaluation
//   (find_response_atom, ResponseKey)              -> MaybeResponse  find_response (the LLM cache)
//   (put_call_atom, LlmCallRecord, std::vector<LlmResponseRecord>)
//                                                  -> PutAnsweredCallResult put_answered_call
//   (finish_atom, int64_t run_id, status)          -> bool           finish_run
//   (finish_atom, int64_t run_id, status, reason)  -> bool           finish_run
//   (begin_run_atom, name, config_text, int64_t cell_id)
//                                                  -> int64_t        begin_or_resume_run (a sweep cell)
//   (store_stats_atom)                             -> StoreStats
//   (put_quarantine_atom, QuarantineRecord)        -> int64_t        put_quarantine (rows marked)
//   (put_sitting_atom, SittingRecord)              -> int64_t        put_sitting (its number)
//   (commit_atom)                                  the actor's own batch tick
using StoreActor = caf::typed_actor<
    caf::replies_to<find_sample_atom, SampleKey>::with<MaybeSample>,
    caf::replies_to<load_search_atom, SampleKey>::with<StoredSearch>,
    caf::replies_to<put_sample_atom, SampleRecord>::with<PutSampleResult>,
    caf::replies_to<put_sample_atom, SampleRecord, LlmCallRecord,
                    LlmResponseRecord>::with<PutSampleResult>,
    caf::replies_to<find_eval_atom, int64_t>::with<MaybeEvaluation>,
    caf::replies_to<put_eval_atom, EvaluationRecord>::with<bool>,
    caf::replies_to<find_response_atom, ResponseKey>::with<MaybeResponse>,
    caf::replies_to<put_call_atom, LlmCallRecord,
                    std::vector<LlmResponseRecord>>::with<PutAnsweredCallResult>,
    caf::replies_to<finish_atom, int64_t, std::string>::with<bool>,
    caf::replies_to<finish_atom, int64_t, std::string, std::string>::with<bool>,
    caf::replies_to<begin_run_atom, std::string, std::string, int64_t>::with<int64_t>,
    caf::replies_to<store_stats_atom>::with<StoreStats>,
    caf::replies_to<put_quarantine_atom, QuarantineRecord>::with<int64_t>,
    caf::replies_to<put_sitting_atom, SittingRecord>::with<int64_t>,
    caf::reacts_to<commit_atom>>;

struct StoreActorOptions {
  // Writes after which a batch commits without waiting for the mailbox to
  // drain: bounds the latency one batch adds and the work a failed commit
  // loses. 1 commits every write on its own (the benchmark's baseline).
  int max_batch = 256;
};

// Spawns the store actor (detached) over `store`, which it then owns.
StoreActor spawn_store(caf::actor_system& sys, std::shared_ptr<RunStore> store,
                       StoreActorOptions options = {});

}  // namespace palladium

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::SampleKey)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::SampleRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::StoredSearch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::PutSampleResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::EvaluationRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::QuarantineRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::SittingRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::LlmCallRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::LlmResponseRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::PutResponseResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::PutAnsweredCallResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<palladium::LlmResponseRecord>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::ResponseKey)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::MaybeSample)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::MaybeEvaluation)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::MaybeResponse)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::StoreStats)
