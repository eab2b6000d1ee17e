// The contracts of the coordinator's actors: what each one accepts and what it answers, checked
// by the compiler at every send and request (CAF 0.17.6's typed actors). These types are the
// protocol; the messages they carry are in actors/messages.hpp, the store's contract is
// StoreActor (actors/store_actor.hpp), and each actor's header says what the messages mean.
//
// Only what other actors (or the ZeroMQ bridge, or a test) send is here: an actor's messages
// to itself (ticks, pumps, call completions) extend its interface privately in its .cpp, so a
// test's fake of a peer implements the public contract and nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/store_actor.hpp"

namespace palladium {

// actors/eval_dispatcher.hpp. A batch's answers go back to its sender as
// (evaluated_atom, EvalAnswers), one per job; the bridge hands the agents' frames over as
// ZmqInboundBatch; (stats_atom, true) restarts the longest-lag figures after reading them (a
// measured window); (quarantine_atom) lists every key quarantined so far.
using EvalDispatcherActor = caf::typed_actor<
    caf::replies_to<eval_atom, wire::Job>::with<Evaluated>,
    caf::reacts_to<eval_atom, EvalBatch>,
    caf::reacts_to<ZmqInboundBatch>,
    caf::replies_to<stats_atom>::with<DispatcherStats>,
    caf::replies_to<stats_atom, bool>::with<DispatcherStats>,
    caf::replies_to<quarantine_atom>::with<std::vector<Quarantine>>>;

// What the sender of an EvalBatch must accept: its answers.
using EvalRequester = caf::typed_actor<caf::reacts_to<evaluated_atom, EvalAnswers>>;

// actors/llm_gateway.hpp.
using LlmGatewayActor = caf::typed_actor<
    caf::replies_to<generate_atom, ChatRequest>::with<ChatResponse>,
    caf::replies_to<stats_atom>::with<LlmGatewayStats>>;

// actors/workload_search_actor.hpp: what the run (budget, in-flight cap) and the dispatcher
// (answers to its EvalBatches) send a search.
using WorkloadSearchActor = caf::typed_actor<
    caf::reacts_to<budget_atom, int, bool>,
    caf::reacts_to<inflight_atom, int>,
    caf::reacts_to<evaluated_atom, EvalAnswers>>;

// actors/run_actor.hpp: started once, answered with the run's final status; its searches
// report progress and their SearchStatus (index, status) when idle or done.
using RunActor = caf::typed_actor<
    caf::replies_to<start_atom>::with<std::string>,
    caf::reacts_to<progress_atom, ProgressEvent>,
    caf::reacts_to<status_atom, int, SearchStatus>>;

// actors/sweep_actor.hpp.
using SweepActor = caf::typed_actor<
    caf::replies_to<start_atom>::with<SweepOutcome>,
    caf::replies_to<running_runs_atom>::with<std::vector<int64_t>>>;

}  // namespace palladium
