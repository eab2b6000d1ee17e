// `palladium sweep SWEEP.yaml [--db FILE]`: every cell of a grid over run
// configs, on one coordinator (one set of agents, one database, shared LLM
// gateways), resumable at any moment.
#include "cli/commands.hpp"

#include <filesystem>
#include <iostream>
#include <utility>

#include <boost/program_options.hpp>
#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/sweep_actor.hpp"
#include "cli/command_line.hpp"
#include "report/report_files.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/drive.hpp"
#include "coordinator/live_status.hpp"
#include "coordinator/status_file.hpp"
#include "coordinator/sweep_setup.hpp"
#include "store/run_store.hpp"
#include "report/sweep_report_costs.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace palladium {

int sweep_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium sweep SWEEP.yaml [options]");
  std::string db_path, out_dir;
  int concurrency = 0, agents = -1;
  opts.add_options()("help,h", "show this help")(
      "db", po::value(&db_path),
      "sweep database (default: a new file under runs/); an existing one resumes the sweep")(
      "concurrency", po::value(&concurrency), "cells at once (overrides the sweep's concurrency)")(
      "agents", po::value(&agents), "local agent processes (overrides the base's agents.local)")(
      "out", po::value(&out_dir), "write the report (Markdown, CSV, JSON, PNG) to this directory");
  po::variables_map vm;
  if (auto stop = parse_command_line("sweep", args, opts, {{"sweep", "SWEEP"}}, vm)) return *stop;
  const std::string sweep_path = vm["sweep"].as<std::string>();
  if (vm.count("concurrency") && concurrency < 1) {
    std::cerr << "palladium sweep: --concurrency must be >= 1\n";
    return 2;
  }

  fs::path home = palladium_home();
  PreparedSweep prepared;
  try {
    prepared = prepare_sweep(sweep_path, concurrency, agents, home);
  } catch (const ConfigError& e) {
    std::cerr << "palladium sweep: " << e.what() << "\n";
    return 2;
  }
  const SweepConfig& sweep = prepared.sweep;
  if (db_path.empty()) db_path = default_db_path(home, sweep.name);
  std::shared_ptr<RunStore> store;
  int64_t sweep_id = 0;
  std::vector<int64_t> cell_ids;
  try {
    store = RunStore::open(db_path);
    sweep_id = record_sweep(*store, prepared, cell_ids);
  } catch (const std::exception& e) {
    std::cerr << "palladium sweep: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "[palladium] sweep " << sweep_id << " (" << sweep.name << "): "
            << prepared.cells.size() << " cells -> " << db_path << "\n";

  std::unique_ptr<Coordinator> coordinator;
  try {
    auto options = coordinator_options(sweep.base, db_path + ".logs");
    // A TPU time below the v6e roofline is suspect too (the dispatcher's plausibility gate).
    if (sweep.base.evaluation.backend == "tpu")
      options.dispatch.checks.costs =
          load_workload_costs(home / "workloads" / "workload_costs.json");
    coordinator = std::make_unique<Coordinator>(std::move(options));
  } catch (const CoordinatorError& e) {
    std::cerr << "palladium sweep: " << sweep_path << ": base " << e.key() << ": " << e.what()
              << "\n";
    return 2;
  }
  auto gateways = start_sweep_services(*coordinator, store, prepared);
  coordinator->start_local_agents();
  int64_t sample_cap = 0;
  auto sweep_actor = spawn_sweep(coordinator->system(),
                                 sweep_plan(prepared, cell_ids, gateways, sample_cap),
                                 coordinator->store(), coordinator->dispatcher());

  caf::expected<SweepOutcome> outcome{SweepOutcome{}};
  {
    // The asker is a scoped_actor, which CAF 0.17 counts as running until it is destroyed (even
    // one constructed hidden); alive at shutdown() it kept await_all_actors_done() waiting
    // forever after the last cell had ended, so it lives only in this block.
    caf::scoped_actor asker{coordinator->system()};
    std::vector<LlmGatewayActor> gateway_list;
    for (const auto& [name, gateway] : gateways) gateway_list.push_back(gateway);
    LiveStatusWriter live(coordinator->system(), coordinator->dispatcher(), gateway_list,
                          status_file_path(db_path), "sweep", sample_cap);
    DriveOptions how;
    how.command = "sweep";
    how.failure = "the sweep failed";
    how.stop_hint = "Everything so far is stored: rerun with --db " + db_path + " to resume.";
    bool poll_failed = false;  // said once: the poll repeats every few seconds
    how.running = [&] {
      std::vector<int64_t> ids;
      asker->request(sweep_actor, std::chrono::seconds(2), running_runs_atom::value)
          .receive([&](std::vector<int64_t>& r) { ids = std::move(r); },
                   [&](caf::error& err) {
                     if (!std::exchange(poll_failed, true))
                       std::cerr << "palladium sweep: WARNING: the sweep did not say which runs "
                                 << "are running (" << to_string(err) << "); until it does, "
                                 << "an interrupt cannot mark them\n";
                   });
      return ids;
    };
    how.poll = [&] { live.maybe_write(how.running); };
    how.cleanup = [&] { live.remove_file(); };
    outcome = drive<SweepOutcome>(*coordinator, sweep_actor, how, start_atom::value);
  }
  coordinator->shutdown();
  if (!outcome) return 1;
  std::cerr << "[palladium] sweep " << sweep_id << " ended; database " << db_path << "\n";
  for (const auto& [key, status] : outcome->cells) std::cout << key << "\t" << status << "\n";
  if (!out_dir.empty()) {
    try {
      write_sweep_report(db_path, sweep_id, out_dir, home, true);
      std::cerr << "[palladium] report written to " << out_dir << "/report.md\n";
    } catch (const std::exception& e) {
      std::cerr << "palladium sweep: cannot write the report: " << e.what() << "\n";
      return 1;
    }
  }
  return outcome->all_finished() ? 0 : 1;
}

}  // namespace palladium
