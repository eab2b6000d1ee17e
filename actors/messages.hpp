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
// Who sends what to whom, and what comes back, is actors/interfaces.hpp: the typed contracts
// are the protocol, checked at compile time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/zmq_bridge.hpp"
#include "protocol/evaluation.hpp"
#include "protocol/wire_protocol.hpp"
#include "llm/call_scheduler.hpp"
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
using running_runs_atom = caf::atom_constant<caf::atom("runningrun")>;


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

// A key the result checks caught (actors/result_check.hpp).
struct Quarantine {
  std::string agent_key;  // its CURVE key (Z85); "" on a plaintext link
  std::string agent_id;   // the name its HELLO gave, for people
  std::string reason;
  int64_t job_id = 0;     // the job on which it was caught (the requester's id, not the ticket)
};

// Counters for `palladium bench dispatch` and status lines. All since the dispatcher started.
struct DispatcherStats {
  int32_t agents = 0;
  int64_t slots = 0;
  int64_t queued = 0;
  int64_t in_flight = 0;
  int64_t submitted = 0;
  int64_t answered = 0;          // results delivered to requesters
  int64_t dispatches = 0;        // job frames sent (requeues and cascade tiers included)
  int64_t requeued = 0;
  int64_t abandoned = 0;
  int64_t refused_hellos = 0;
  int64_t refused_results = 0;   // not from the lease holder, or for no live lease
  int64_t heartbeats_sent = 0;
  int64_t checks = 0;       // second opinions and re-timings asked for (tie-breaks included)
  int64_t quarantined = 0;  // keys quarantined
  int64_t heartbeat_interval_ms = 0;
  int64_t batch_window_us = 0;   // the bridge's, as last set
  // Since the start, or since the last (stats_atom, true):
  int64_t longest_inbound_lag_us = 0;  // bridge read -> dispatcher handled, worst frame
  int64_t longest_tick_late_us = 0;    // the heartbeat tick's worst lateness
};

struct LlmGatewayStats {
  CallScheduler::Stats calls;
  double spent_usd = 0;       // realised cost of finished calls
  double committed_usd = 0;   // realised + in-flight worst case
  std::string stopped;        // why no more calls are issued (the dollar cap); "" if running
};

struct SweepOutcome {
  // Cell key -> the status its run ended with ("finished", "incomplete", "failed: ...").
  std::vector<std::pair<std::string, std::string>> cells;
  bool all_finished() const;
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
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::DispatcherStats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<palladium::Quarantine>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::LlmGatewayStats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::SweepOutcome)
