// The messages the coordinator's actors exchange, in one place.
//
// Protocol version: these are in-process CAF messages only (the network speaks
// protocol/wire_protocol.hpp), so they carry no version; changing one is a
// compile-time change on both ends.
//
// Every message type here stays inside one process, so CAF never serializes
// it; CAF_ALLOW_UNSAFE_MESSAGE_TYPE says exactly that. Going distributed with
// CAF::io would need inspect() overloads instead.
//
// Who sends what:
//   workload_search -> llm_gateway:     (generate_atom, ChatRequest)            -> ChatResponse
//   workload_search -> store:           StoreActor (actors/store_actor.hpp)
//   workload_search -> eval_dispatcher: (eval_atom, EvalBatch)                  (no response)
//   eval_dispatcher -> workload_search: (evaluated_atom, EvalAnswers)            one per job
//   eval, tests     -> eval_dispatcher: (eval_atom, wire::Job)                  -> Evaluated
//   workload_search -> run:             (progress_atom, ProgressEvent)
//                                       (status_atom, int index, SearchStatus)   when idle or done
//   run -> workload_search:             (budget_atom, int limit, bool open)      global reallocation
//                                       (inflight_atom, int cap)                 pipelining cap
//   zmq bridge      -> eval_dispatcher: (ZmqInboundBatch)
//   run, bench, status -> eval_dispatcher: (stats_atom)                         -> DispatcherStats
//                                       (stats_atom, true): the same, then the longest-lag
//                                       figures start again from 0 (a measured window)
//   run, tests      -> eval_dispatcher: (quarantine_atom)                       -> std::vector<Quarantine>
//                                       every key quarantined so far
//   main            -> run:             (start_atom)                            -> std::string status
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/zmq_bridge.hpp"
#include "protocol/evaluation.hpp"
#include "protocol/wire_protocol.hpp"
#include "llm/provider.hpp"
#include "actors/store_actor.hpp"
#include "search/strategy.hpp"

namespace palladium {

using generate_atom = caf::atom_constant<caf::atom("generate")>;
using eval_atom = caf::atom_constant<caf::atom("eval")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using beat_atom = caf::atom_constant<caf::atom("beat")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using budget_atom = caf::atom_constant<caf::atom("budget")>;
using inflight_atom = caf::atom_constant<caf::atom("inflight")>;
using evaluated_atom = caf::atom_constant<caf::atom("evaluated")>;
using quarantine_atom = caf::atom_constant<caf::atom("quarantine")>;


// Frames from agents, as the bridge read them in one turn (actors/zmq_bridge.hpp).
using ZmqInbound = InboundFrame;
struct ZmqInboundBatch {
  std::vector<ZmqInbound> frames;
};

// Batched evaluation (actors/eval_dispatcher.hpp): jobs go to the dispatcher as a plain
// message, and their answers come back to the sender in batches, several per message. A
// request/response per job cost the requester's CAF a response handler per job in flight,
// searched and erased linearly (CAF 0.17 keeps them in a flat vector), and two mailbox
// messages per candidate.
struct EvalBatch {
  std::vector<wire::Job> jobs;
};
// The one answer to one job of an EvalBatch: its Evaluated (protocol/evaluation.hpp), or (error set) a retryable
// Errc::unavailable after too many lost leases, or Errc::already_exists for a job id already
// being evaluated.
struct EvalAnswer {
  int64_t job_id = 0;
  Evaluated evaluated;  // when !error
  caf::error error;
};
struct EvalAnswers {
  std::vector<EvalAnswer> answers;
};

struct ProgressEvent {
  // A search's end is not an event: the run learns it from the status it reports (done) and
  // from its monitor's down message (failed).
  enum Kind { generated, evaluated } kind;
  std::string workload;
  bool correct = false;  // for `evaluated`
  bool reused = false;   // found in the store instead of paid for again
  SampleRole role = SampleRole::code;  // for `generated` and `evaluated`
  int units = 0;                       // budget units the sample cost (`generated`)
};

}  // namespace palladium

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::ChatRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::ChatResponse)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::ZmqInboundBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::EvalBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::EvalAnswers)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::ProgressEvent)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::SearchStatus)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::wire::Job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::Evaluated)
