// `palladium eval --workload ID FILE [--json] [--backend interpret|tpu]`
//
// Evaluates one kernel file by hand through exactly the path a run uses: a
// dispatcher behind a ZeroMQ ROUTER, one local agent process, its sandboxed
// judge. Exit status 0 whatever the verdict; 1 only when the evaluation
// itself could not run (the agent died or never answered); 2 for bad input.
#include "cli/commands.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/messages.hpp"
#include "cli/command_line.hpp"
#include "config/evaluation_config.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/drive.hpp"
#include "report/evaluation_report.hpp"
#include "workloads/workload_catalog.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace palladium {

int eval_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium eval --workload ID FILE [options]");
  std::string workload, file, backend = "interpret";
  double timeout_s = 120;
  std::vector<int64_t> seeds{0, 1};
  bool json = false, allow_jax = false;
  opts.add_options()("help,h", "show this help")("workload", po::value(&workload),
                                                 "workload id, e.g. 8p or 41k")(
      "backend", po::value(&backend)->default_value(backend), "interpret or tpu")(
      "timeout", po::value(&timeout_s)->default_value(timeout_s), "seconds before the kernel is killed")(
      "seeds", po::value(&seeds)->multitoken(), "input seeds to check on (default 0 1)")(
      "allow-jax", po::bool_switch(&allow_jax), "accept a candidate without a pallas_call")(
      "json", po::bool_switch(&json), "print one JSON object");
  po::variables_map vm;
  if (auto stop = parse_command_line("eval", args, opts, {{"file", "FILE"}}, vm, {"workload"}))
    return *stop;
  file = vm["file"].as<std::string>();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::cerr << "palladium eval: " << file << ": "
              << (fs::is_directory(file, ec) ? "is a directory, not a kernel file"
                                             : "no such kernel file")
              << "\n";
    return 2;
  }
  if (!(timeout_s > 0 && timeout_s <= kMaxTimeoutS)) {
    std::cerr << "palladium eval: --timeout must be a number of seconds in (0, " << kMaxTimeoutS
              << "]\n";
    return 2;
  }
  std::ifstream in(file);
  if (!in) {
    std::cerr << "palladium eval: " << file << ": cannot read the kernel file\n";
    return 2;
  }
  std::ostringstream code;
  code << in.rdbuf();
  if (!workload_catalog().find(workload)) {
    std::cerr << "palladium eval: --workload: no workload '" << workload
              << "' (workloads/catalog.json lists " << workload_catalog().id_list() << ")\n";
    return 2;
  }
  if (backend != "interpret" && backend != "tpu") {
    std::cerr << "palladium eval: --backend must be interpret or tpu, not '" << backend << "'\n";
    return 2;
  }

  // The agent's own progress lines would bury the answer.
  if (!std::getenv("SPDLOG_LEVEL")) {
    setenv("SPDLOG_LEVEL", "warn", 1);  // inherited by the agent
    spdlog::set_level(spdlog::level::warn);
  }
  auto log_dir = fs::temp_directory_path() / ("palladium-eval-" + std::to_string(getpid()));
  CoordinatorOptions copts;
  copts.local_agents = 1;
  copts.agent.backend = backend;
  copts.agent.log_dir = log_dir.string();
  copts.quiet_endpoint = true;
  std::optional<Coordinator> made;
  try {
    made.emplace(copts);
  } catch (const CoordinatorError& e) {
    std::cerr << "palladium eval: cannot start the coordinator: " << e.what() << "\n";
    return 1;
  }
  Coordinator& coordinator = *made;
  coordinator.start_local_agents();

  wire::Job job;
  job.job_id = 1;
  job.workload_id = workload;
  job.code = code.str();
  job.check_level = "full";
  job.timeout_s = timeout_s;
  job.seeds = seeds;
  job.require_pallas = !allow_jax;
  DriveOptions how;
  how.command = "eval";
  how.failure = "evaluation could not run";
  how.stop_hint = "the evaluation could not run; the agent's judge log is in " + log_dir.string();
  how.loss = Coordinator::AgentLoss::first;
  auto result = drive<Evaluated>(coordinator, coordinator.dispatcher(), how, eval_atom::value, job);
  coordinator.shutdown();
  if (!result) return 1;
  if (json)
    std::cout << evaluation_json(*result, workload).dump(2) << "\n";
  else
    print_evaluation(std::cout, *result, workload);
  std::error_code ignored;
  fs::remove_all(log_dir, ignored);
  return 0;
}

}  // namespace palladium
