// eval_dispatcher actor: hands evaluation jobs to agents and answers each
// (eval_atom, wire::Job) request with exactly one wire::Result.
//
// The bookkeeping (queue, slots, leases, liveness, requeue, duplicates) lives
// in JobLedger; this actor decodes frames from the ZmqBridge, feeds the ledger,
// sends what it assigns, heartbeats every agent, and delivers results to the
// waiting workload_search actors. Malformed frames are logged and dropped.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/job_ledger.hpp"
#include "actors/zmq_bridge.hpp"

namespace palladium {

// Spawns the dispatcher and starts the bridge's I/O thread feeding it. The
// dispatcher stops the bridge when it terminates.
caf::actor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<ZmqBridge> bridge,
                                 JobLedger::Options options);

}  // namespace palladium
