// palladium: LLM-written Pallas TPU kernels, searched and checked at scale.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"

namespace {

// The release `palladium --version` prints.
const char* kVersion = "0.1.0";

const char* kUsage = R"(usage: palladium <command> [options]

commands:
  run CONFIG [--db FILE]        run a search config (starts local agents, prints the report)
  agent --connect tcp://H:P     serve evaluations for a coordinator (one per TPU host)
  sweep SWEEP [--db FILE]       run every cell of a grid over run configs (resumable)
  report DB [--format json]     per-workload rows and suite metrics of a run database
  report DB --out DIR           Table 2/3, Figure 4, budget curves, best kernels: MD, CSV, JSON, PNG
  policy-eval DB --policy SPEC  what another budget policy would have achieved, from the recordings
  compare DB --a SPEC --b SPEC  paired comparison of two conditions, with bootstrap intervals
  status DB [--live]            cells, agents, queue, samples and dollars, best so far
  plan CONFIG|SWEEP [--chips N] calls, tokens, dollars, wall time and the binding limit
  serve DB [--port P]           a live web dashboard of a run database (http://127.0.0.1:8765/)
  eval --workload ID FILE       evaluate one kernel file through an agent and its judge
  context WORKLOAD [--sizes]    the context blocks a prompt carries for a workload
  keys new NAME [--dir DIR]     make a CURVE key pair for the authenticated agent link
  bench dispatch --agents N     the dispatch path under N simulated agents (real ZeroMQ + CURVE)
  synthetic variants WORKLOAD   the kernels the offline synthetic model can write
  bench store                   the run store's cost per candidate, old and new write paths
  bench llm --base-url URL      the LLM gateway's samples/s and CPU per call (scripts/bench_llm.sh)

'palladium <command> --help' shows a command's options; 'palladium --version' the version.
)";

}  // namespace

namespace palladium {

std::filesystem::path palladium_home() {
  if (const char* env = std::getenv("PALLADIUM_HOME"); env && *env) return env;
  return PALLADIUM_SOURCE_DIR;
}

}  // namespace palladium

int main(int argc, char** argv) {
  // Logs go to stderr so that stdout carries only results (reports, --json).
  spdlog::set_default_logger(spdlog::stderr_color_mt("palladium"));
  // On a terminal `run` keeps a live progress line on stderr (rewritten with \r); a log line
  // first erases it, so the log stands on its own line above the next redraw instead of being
  // glued to the progress text.
  spdlog::set_pattern(std::string(isatty(STDERR_FILENO) ? "\r\033[K" : "") +
                      "[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug for more
  if (argc < 2) {
    std::cerr << "palladium: missing the command\n\n" << kUsage;
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "run") return palladium::run_command(args);
    if (cmd == "agent") return palladium::agent_command(args);
    if (cmd == "report") return palladium::report_command(args);
    if (cmd == "sweep") return palladium::sweep_command(args);
    if (cmd == "policy-eval") return palladium::policy_eval_command(args);
    if (cmd == "compare") return palladium::compare_command(args);
    if (cmd == "status") return palladium::status_command(args);
    if (cmd == "plan") return palladium::plan_command(args);
    if (cmd == "serve") return palladium::serve_command(args);
    if (cmd == "eval") return palladium::eval_command(args);
    if (cmd == "context") return palladium::context_command(args);
    if (cmd == "keys") return palladium::keys_command(args);
    if (cmd == "bench") return palladium::bench_command(args);
    if (cmd == "synthetic") return palladium::synthetic_command(args);
    if (cmd == "--version" || cmd == "-V" || cmd == "version") {
      std::cout << "palladium " << kVersion << "\n";
      return 0;
    }
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::cout << kUsage;
      return 0;
    }
  } catch (const boost::program_options::error& e) {
    std::cerr << "palladium " << cmd << ": " << e.what() << "\n";
    return 2;
  }
  std::cerr << "palladium: unknown command '" << cmd << "'\n" << kUsage;
  return 2;
}
