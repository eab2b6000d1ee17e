// `palladium bench llm --base-url URL`: the LLM gateway's throughput and
// cost per call against an OpenAI-compatible server, configurations side by
// side (scripts/bench_llm.sh starts tests/llm/fake_llm_server.py with 200 ms
// of latency and runs this against it).
//
// Each configuration sends the same kind of work, S requests for samples of
// one prompt (sample indices 0..S-1), through a fresh gateway:
//   one call at a time        max_concurrent 1, one sample per call
//   8 in flight               max_concurrent 8
//   8 in flight, coalesced    identical requests share a call with n = 4
//   60/min                    8 in flight under a 60 requests/min limit
//   60/min, coalesced         the same with n = 4
// and prints samples/s, calls, wall time, the bench process's CPU per call
// (the gateway, curl's I/O thread and the asking actors), and for the limited
// rows the most requests the server saw in any 60 s window (from its request
// log), then samples/s against the first row. The limit holds when that
// count is at most the limit.
//
// The server must offer the fake server's control endpoints (/_fake/reset,
// /_fake/log) next to /v1; a real API does not, and is not what this
// measures. Exit status 0; 1 when a request failed or a limit was exceeded;
// 2 for bad usage.
#pragma once

#include <string>
#include <vector>

namespace palladium {

int bench_llm_command(const std::vector<std::string>& args);

}  // namespace palladium
