// `palladium bench dispatch|store|llm|swarm ...`: the benchmarks, in bench/.
#include "cli/commands.hpp"

#include <iostream>

#include "bench/bench_dispatch.hpp"
#include "bench/bench_llm.hpp"
#include "bench/bench_store.hpp"
#include "bench/bench_swarm.hpp"

namespace palladium {
namespace {

constexpr const char* kBenchUsage = R"(usage: palladium bench dispatch|store|llm [options]

  dispatch --agents N --eval-ms M   the dispatch path under N simulated agents (real ZeroMQ +
                                    CURVE, in child processes: `bench swarm`)
  store                             the run store's cost per candidate
  llm --base-url URL                the LLM gateway's samples/s and CPU per call
Each prints its options with --help; docs/benchmarks.md has their histories.
)";

}  // namespace

int bench_command(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "dispatch") return bench_dispatch_command(rest);
  if (sub == "store") return bench_store_command(rest);
  if (sub == "llm") return bench_llm_command(rest);
  if (sub == "swarm") return bench_swarm_command(rest);
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::cout << kBenchUsage;
    return 0;
  }
  std::cerr << (sub.empty() ? "palladium bench: which benchmark?\n"
                            : "palladium bench: no benchmark '" + sub + "'\n")
            << kBenchUsage;
  return 2;
}

}  // namespace palladium
