// A swarm of simulated agents for `palladium bench dispatch`: one process, many agents, each
// on the agent daemon's own link (agent/coordinator_link.hpp: hello on every connect,
// heartbeats following the coordinator's interval, liveness, reconnects with backoff after a
// bye or silence) with its own CURVE key pair, the links sharing one ZeroMQ context. In place
// of judges each has one slot that answers a job `eval_ms` after it started with a `correct`
// result echoing the lease, and queues the jobs sent meanwhile. It measures what only an agent
// can: how long it held a job (busy time).
//
// Run as `palladium bench swarm --connect EP --server-key Z85 --count K --eval-ms M`, reading
// K secret keys (one Z85 line each) on stdin. SIGUSR1 prints one line "busy_us jobs rehellos"
// (totals so far; rehellos: byes received, each answered by a new hello after the link's
// backoff) on stdout; SIGTERM ends it.
#pragma once

#include <string>
#include <vector>

namespace palladium {

int bench_swarm_command(const std::vector<std::string>& args);

}  // namespace palladium
