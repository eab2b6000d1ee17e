// eval_dispatcher actor: hands evaluation jobs to agents and answers each
// (eval_atom, wire::Job) request with exactly one Evaluated (the evaluation and the facts of the
// agent that made it, actors/messages.hpp), or with a retryable
// Errc::unavailable error when the job was lost `max_attempts` times to infrastructure faults
// (agents gone, leases expired): such a loss is never a verdict on the candidate.
// The batched form, (eval_atom, EvalBatch) sent without a request (actors/messages.hpp), gets
// the same one answer per job, as an EvalAnswer in an (evaluated_atom, EvalAnswers) message to
// the sender; the answers a batch of agents' frames (or a tick) produced for one requester
// travel in one message. Its requesters monitor the dispatcher: no response carries an error
// if it terminates.
//
// The bookkeeping (queue, slots, leases, liveness, requeue, late results) lives in JobLedger
// and the HELLO checks in AgentAdmission; this actor decodes the agents' frames, feeds both,
// sends what the ledger assigns through its FrameSink (actors/frame_sink.hpp: the ZmqBridge in
// production), heartbeats the agents that are due, and delivers results to the waiting
// requesters. Agents see the dispatcher's own ticket for a job, never the requester's job id
// (a store row id), which its answer carries back; one requester has one answer per job id,
// and two requesters may use the same id. AgentFacts::dispatches tells how many dispatches an
// answer took. Malformed frames, refused HELLOs and results from anyone but the lease holder
// are logged (rate-limited) and dropped. Its time is the actor system's clock.
//
// Result checks (actors/result_check.hpp): a final result drawn for a random check, or a
// `correct` with a suspect timing, is not answered at once: the same job goes to a different
// agent (a re-timing may use another slot of the same agent when no other agent can take it),
// and the answer is what the opinions decide. A disagreement quarantines the outvoted key:
// it is dropped (its leases requeued), told BYE, refused at every later HELLO, and listed by
// (quarantine_atom) so that the run stores it and marks its results for re-evaluation.
// Every answer carries the sending agent's CURVE key (AgentFacts::agent_key).
//
// Cascade: with target backend "tpu" and CPU-check agents in the fleet, a job first runs the
// CPU tier (check level cpu_check: lint, lowering, the libtpu compile where present, interpret
// numerics) on an interpret agent; only a `correct` survivor goes on to a TPU agent, one job
// per chip, and the TPU result is the answer. A candidate that fails the CPU tier is answered
// with that result and never takes a chip. Without CPU-check agents jobs go straight to TPU
// agents.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include <caf/all.hpp>

#include "actors/agent_admission.hpp"
#include "actors/capabilities.hpp"
#include "actors/frame_sink.hpp"
#include "actors/interfaces.hpp"
#include "actors/job_ledger.hpp"
#include "actors/messages.hpp"
#include "actors/result_check.hpp"
#include "actors/zmq_bridge.hpp"

namespace palladium {

struct DispatcherOptions {
  JobLedger::Options ledger;
  AgentAdmission::Options admission;
  // What a final verdict needs: backend, and the device kind and versions the run pins (empty
  // = any). The stages follow from the check level.
  Requirement target{"interpret", "", "", "", 0};
  bool cascade = true;
  // The longest batch window the bridge gets (batch_window_for); 0 turns batching off.
  std::chrono::microseconds max_batch_window{2000};
  // Random checks are off unless asked for (the run config's evaluation.recheck_share sets
  // them); the plausibility gate is always on.
  ResultCheckOptions checks;
};

// The bridge's batch window (actors/zmq_bridge.hpp, Batching) for a fleet whose typical
// evaluation takes `typical_eval`: 1/200 of it, at most `cap`, and none under 100 us. A frame
// waits at most one window on its way in and one on its way out, so a job's round trip grows
// by at most 1% of an evaluation (hidden anyway by the job each agent has prefetched); with
// evaluations under 20 ms (or a lone agent answering at once) nothing is batched and nothing
// waits.
std::chrono::microseconds batch_window_for(std::chrono::microseconds typical_eval,
                                           std::chrono::microseconds cap);

// Spawns the dispatcher over `sink`; the agents' frames come in as ZmqInboundBatch messages
// (a test sends them itself). The dispatcher stops the sink when it terminates.
EvalDispatcherActor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<FrameSink> sink,
                                          DispatcherOptions options);

// Spawns the dispatcher over the bridge and starts the bridge's I/O thread feeding it. The
// dispatcher stops the bridge when it terminates.
EvalDispatcherActor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<ZmqBridge> bridge,
                                 DispatcherOptions options);

}  // namespace palladium

