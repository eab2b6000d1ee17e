#include "actors/store_actor.hpp"

#include <time.h>

#include <functional>
#include <utility>
#include <vector>

#include "actors/errors.hpp"

namespace palladium {
namespace {

struct StoreState {
  std::shared_ptr<RunStore> store;
  StoreActorOptions options;
  StoreStats stats;
  // The replies of the open batch, sent once it has committed (or failed).
  std::vector<std::function<void(const caf::error*)>> replies;
  int batch_writes = 0;
  static inline const char* name = "store";
};

using Self = StoreActor::stateful_pointer<StoreState>;

caf::error store_error(const std::exception& e) {
  if (auto* s = dynamic_cast<const StoreError*>(&e)) return make_error(s->code(), s->what());
  return make_error(Errc::internal, std::string("run store: ") + e.what());
}

// Commits the open batch and answers everyone waiting on it.
void commit(Self self) {
  auto& st = self->state;
  if (!st.store->in_batch()) return;
  auto replies = std::move(st.replies);
  st.replies.clear();
  const int writes = st.batch_writes;
  st.batch_writes = 0;
  caf::error failure;
  try {
    st.store->commit_batch();
    ++st.stats.commits;
    st.stats.largest_batch = std::max<int64_t>(st.stats.largest_batch, writes);
  } catch (const std::exception& e) {
    failure = store_error(e);
    st.stats.failed_writes += writes;
  }
  for (auto& reply : replies) reply(failure ? &failure : nullptr);
}

// Runs `f` against the store and answers with its value once that is
// durable: at the batch's commit, or at once when there is nothing to wait
// for (a read outside a batch).
template <class T, class F>
caf::typed_response_promise<T> handle(Self self, bool is_write, F f) {
  auto& st = self->state;
  auto rp = self->make_response_promise<T>();
  if (is_write && !st.store->in_batch()) {
    try {
      st.store->begin_batch();
    } catch (const std::exception& e) {
      rp.deliver(store_error(e));
      return rp;
    }
    // Everything already in the mailbox joins this batch.
    self->send(self, commit_atom::value);
  }
  try {
    T value = f(*st.store);
    if (!st.store->in_batch()) {
      rp.deliver(std::move(value));
      return rp;
    }
    st.replies.push_back([rp, value = std::move(value)](const caf::error* failure) mutable {
      if (failure)
        rp.deliver(*failure);
      else
        rp.deliver(std::move(value));
    });
  } catch (const std::exception& e) {
    // The write's savepoint is rolled back; the rest of the batch stands.
    rp.deliver(store_error(e));
    if (is_write) ++st.stats.failed_writes;
  }
  if (is_write) {
    ++st.stats.writes;
    if (++st.batch_writes >= st.options.max_batch) commit(self);
  }
  return rp;
}

StoreActor::behavior_type store_actor(Self self, std::shared_ptr<RunStore> store,
                                      StoreActorOptions options) {
  self->state.store = std::move(store);
  self->state.options = options;
  if (self->state.options.max_batch < 1) self->state.options.max_batch = 1;
  // A batch left open at exit was never acknowledged; committing it is
  // still right, since every write in it was complete.
  self->attach_functor([store = self->state.store](const caf::error&) {
    if (store->in_batch()) {
      try {
        store->commit_batch();
      } catch (...) {
      }
    }
  });
  constexpr bool read = false, write = true;
  return {
      [=](find_sample_atom, const SampleKey& k) {
        return handle<MaybeSample>(self, read,
                                   [&](RunStore& s) { return MaybeSample{s.find_sample(k)}; });
      },
      [=](load_search_atom, const SampleKey& k) {
        return handle<StoredSearch>(self, read,
                                    [&](RunStore& s) { return s.search_samples(k); });
      },
      [=](put_sample_atom, const SampleRecord& sample) {
        return handle<PutSampleResult>(self, write,
                                       [&](RunStore& s) { return s.put_sample(sample); });
      },
      [=](put_sample_atom, const SampleRecord& sample, const LlmCallRecord& call,
          const LlmResponseRecord& response) {
        return handle<PutSampleResult>(self, write, [&](RunStore& s) {
          return s.put_generated_sample(sample, call, response);
        });
      },
      [=](find_eval_atom, int64_t candidate_id) {
        return handle<MaybeEvaluation>(self, read, [&](RunStore& s) {
          return MaybeEvaluation{s.find_evaluation(candidate_id)};
        });
      },
      [=](put_eval_atom, const EvaluationRecord& record) {
        return handle<bool>(self, write, [&](RunStore& s) { return s.put_evaluation(record); });
      },
      [=](put_quarantine_atom, const QuarantineRecord& record) {
        return handle<int64_t>(self, write,
                               [&](RunStore& s) { return s.put_quarantine(record); });
      },
      [=](put_sitting_atom, const SittingRecord& record) {
        return handle<int64_t>(self, write, [&](RunStore& s) { return s.put_sitting(record); });
      },
      [=](find_response_atom, const ResponseKey& key) {
        return handle<MaybeResponse>(self, read,
                                     [&](RunStore& s) { return MaybeResponse{s.find_response(key)}; });
      },
      [=](put_call_atom, const LlmCallRecord& call,
          const std::vector<LlmResponseRecord>& responses) {
        return handle<PutAnsweredCallResult>(self, write, [&](RunStore& s) {
          return s.put_answered_call(call, responses);
        });
      },
      [=](finish_atom, int64_t run_id, const std::string& status) {
        return handle<bool>(self, write, [&](RunStore& s) {
          s.finish_run(run_id, status);
          return true;
        });
      },
      [=](finish_atom, int64_t run_id, const std::string& status, const std::string& reason) {
        return handle<bool>(self, write, [&](RunStore& s) {
          s.finish_run(run_id, status, reason);
          return true;
        });
      },
      [=](begin_run_atom, const std::string& name, const std::string& config_text,
          int64_t cell_id) {
        return handle<int64_t>(self, write, [&](RunStore& s) {
          return s.begin_or_resume_run(name, config_text, cell_id);
        });
      },
      [=](store_stats_atom) {
        StoreStats stats = self->state.stats;
        timespec cpu{};
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
          stats.thread_cpu_ms = cpu.tv_sec * 1e3 + cpu.tv_nsec / 1e6;
        return stats;
      },
      [=](commit_atom) { commit(self); },
  };
}

}  // namespace

StoreActor spawn_store(caf::actor_system& sys, std::shared_ptr<RunStore> store,
                       StoreActorOptions options) {
  return sys.spawn<caf::detached>(store_actor, std::move(store), options);
}

}  // namespace palladium
