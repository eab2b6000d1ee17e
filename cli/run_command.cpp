// `palladium run CONFIG [--db FILE]`: one search run on this machine plus any
// agents that connect to it.
#include "cli/commands.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>
#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/run_actor.hpp"
#include "cli/command_line.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/drive.hpp"
#include "coordinator/dry_run.hpp"
#include "coordinator/live_status.hpp"
#include "config/run_config.hpp"
#include "coordinator/run_setup.hpp"
#include "report/sweep_report_costs.hpp"
#include "report/run_report.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace palladium {

int run_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium run CONFIG [options]");
  std::string db_path;
  AgentsOverrides agents;
  bool no_progress = false, no_report = false, no_cache = false, dry_run = false;
  opts.add_options()("help,h", "show this help")(
      "db", po::value(&db_path), "run database (default: a new file under runs/); an existing "
                                 "database with the same config resumes that run")(
      "agents", po::value(&agents.local),
      "local agent processes to start (overrides agents.local)")(
      "listen", po::value(&agents.listen), "endpoint agents connect to (overrides agents.listen)")(
      "server-key", po::value(&agents.server_key),
      "the coordinator's secret certificate (palladium keys new; overrides agents.server_key); "
      "default: a fresh key pair for this run")(
      "allow", po::value(&agents.allow), "allowlist of agent public keys: a directory of .key "
                                         "files or a file of keys (overrides agents.allow)")(
      "insecure-plaintext", po::bool_switch(&agents.insecure_plaintext),
      "no CURVE: an unauthenticated, unencrypted agent link (trusted networks only)")(
      "no-progress", po::bool_switch(&no_progress), "print progress as lines, not a live line")(
      "no-cache", po::bool_switch(&no_cache),
      "ask the LLM again instead of reusing answers stored in the database by other runs "
      "(the new answers are stored too; a resumed run still reuses its own)")(
      "no-report", po::bool_switch(&no_report), "do not print the report at the end")(
      "dry-run", po::bool_switch(&dry_run),
      "run the config's searches offline on the synthetic model, evaluating nothing and storing "
      "nothing, and print the samples, tokens and dollars the run would spend");
  po::variables_map vm;
  if (auto stop = parse_command_line("run", args, opts, {{"config", "CONFIG"}}, vm)) return *stop;
  const std::string config_path = vm["config"].as<std::string>();

  // Everything that can be wrong with the config is found before the
  // database is touched, so a bad config never appends a run to it.
  fs::path home = palladium_home();
  PreparedRun prepared;
  try {
    prepared = prepare_run(config_path, agents, dry_run, !no_cache, home);
  } catch (const ConfigError& e) {
    std::cerr << "palladium run: " << e.what() << "\n";
    return 2;
  }
  const RunConfig& config = prepared.config;
  if (dry_run) {
    try {
      std::cout << dry_run_config(config, prepared.searches, home);
    } catch (const std::exception& e) {
      std::cerr << "palladium run --dry-run: " << config_path << ": " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  if (db_path.empty()) db_path = default_db_path(home, config.name);
  std::shared_ptr<RunStore> store;
  int64_t run_id = 0;
  try {
    store = RunStore::open(db_path);
    run_id = store->begin_or_resume_run(config.name, config.text);
  } catch (const std::exception& e) {
    std::cerr << "palladium run: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "[palladium] run " << run_id << " (" << config.name << ") -> " << db_path << "\n";

  std::unique_ptr<Coordinator> coordinator;
  try {
    auto options = coordinator_options(config, db_path + ".logs");
    // A TPU time below the v6e roofline is suspect too (the dispatcher's plausibility gate).
    if (config.evaluation.backend == "tpu")
      options.dispatch.checks.costs =
          load_workload_costs(palladium_home() / "workloads" / "workload_costs.json");
    coordinator = std::make_unique<Coordinator>(std::move(options));
  } catch (const CoordinatorError& e) {
    store->finish_run(run_id, "failed");
    std::cerr << "palladium run: " << config_path << ": " << e.key() << ": " << e.what() << "\n";
    return 2;
  }
  coordinator->start_services(store, prepared.llm.runner, prepared.llm.options);
  coordinator->start_local_agents();

  RunPlan plan = run_plan(config, run_id, std::move(prepared.searches),
                          !no_progress && isatty(STDERR_FILENO));
  const int64_t sample_cap = static_cast<int64_t>(plan.searches.size()) * plan.budget_per_search;
  auto run = spawn_run(coordinator->system(), std::move(plan), coordinator->store(),
                       coordinator->llm_gateway(), coordinator->dispatcher());
  caf::expected<std::string> status{std::string()};
  {
    // The live half of `palladium status DB --live` and of `palladium serve` (DB.status.json).
    // Its scoped actor must be gone before shutdown() (see sweep_command.cpp), hence the block.
    LiveStatusWriter live(coordinator->system(), coordinator->dispatcher(),
                          {coordinator->llm_gateway()}, status_file_path(db_path), "run",
                          sample_cap);
    DriveOptions how;
    how.command = "run";
    how.failure = "the run failed";
    how.stop_hint = "Everything so far is stored: rerun with --db " + db_path + " to resume.";
    how.running = [run_id] { return std::vector<int64_t>{run_id}; };
    how.poll = [&] { live.maybe_write(how.running); };
    how.cleanup = [&] { live.remove_file(); };
    status = drive<std::string>(*coordinator, run, how, start_atom::value);
  }
  coordinator->shutdown();
  if (!status) return 1;

  std::cerr << "[palladium] run " << run_id << " " << *status << "; database " << db_path << "\n";
  if (!no_report) {
    try {
      auto reader = RunStore::open(db_path, RunStore::Mode::read_only);
      std::cout << report_text(
          *reader, run_id, config.workloads,
          load_input_sensitivity(home / "workloads" / "input_sensitivity.json"));
    } catch (const std::exception& e) {
      std::cerr << "palladium run: cannot build the report: " << e.what() << "\n";
      return 1;
    }
  }
  return *status == "finished" ? 0 : 1;
}

}  // namespace palladium
