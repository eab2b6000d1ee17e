// A swarm of simulated agents for `palladium bench dispatch`: one process, many DEALER sockets,
// each a full agent on the real wire protocol with its own CURVE key pair. An agent says hello
// with 1 slot, heartbeats when it sent nothing for an interval (following the coordinator's
// interval), and answers each job `eval_ms` after it arrived with a `correct` result that
// echoes the lease. After a bye it says hello again with a backoff. It measures what only an agent can: how long it held a job (busy time).
//
// Run as `palladium bench swarm --connect EP --server-key Z85 --count K --eval-ms M`, reading
// K secret keys (one Z85 line each) on stdin. SIGUSR1 prints one line "busy_us jobs rehellos"
// (totals so far; rehellos: HELLOs sent again after a bye) on stdout; SIGTERM ends it.
#pragma once

#include <string>
#include <vector>

namespace palladium {

int bench_swarm_command(const std::vector<std::string>& args);

}  // namespace palladium
