#include "actors/store_actor.hpp"

#include "actors/messages.hpp"

namespace palladium {
namespace {

// Turns a store exception into an error reply instead of killing the actor:
// one bad write must not take down the run's only writer.
template <class F>
auto guarded(F&& f) -> caf::result<decltype(f())> {
  try {
    return f();
  } catch (const std::exception& e) {
    return caf::make_error(caf::sec::runtime_error, std::string("run store: ") + e.what());
  }
}

caf::behavior store_actor(caf::event_based_actor*, std::shared_ptr<RunStore> store) {
  return {
      [=](find_cand_atom, const CandidateKey& k) {
        return guarded([&] {
          return MaybeCandidate{
              store->find_candidate(k.run_id, k.workload, k.method, k.seed, k.sample_index)};
        });
      },
      [=](put_cand_atom, const CandidateRecord& cand, LlmCallRecord call) {
        // The candidate first: a crash between the two writes loses one call's
        // token accounting, never the candidate it paid for.
        return guarded([&] {
          auto id = store->insert_candidate(cand);
          call.candidate_id = id;
          store->insert_llm_call(call);
          return id;
        });
      },
      [=](find_eval_atom, int64_t candidate_id) {
        return guarded([&] { return MaybeEvaluation{store->find_evaluation(candidate_id)}; });
      },
      [=](put_eval_atom, const EvaluationRecord& record) {
        return guarded([&] { return store->insert_evaluation(record); });
      },
      [=](finish_atom, int64_t run_id, const std::string& status) {
        return guarded([&] {
          store->finish_run(run_id, status);
          return true;
        });
      },
  };
}

}  // namespace

caf::actor spawn_store(caf::actor_system& sys, std::shared_ptr<RunStore> store) {
  return sys.spawn<caf::detached>(store_actor, std::move(store));
}

}  // namespace palladium
