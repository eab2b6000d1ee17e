// `palladium sweep SWEEP.yaml [--db FILE]`: every cell of a grid over run
// configs, on one coordinator (one set of agents, one database, shared LLM
// gateways), resumable at any moment.
#include "cli/commands.hpp"

#include <unistd.h>

#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <set>

#include <boost/program_options.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "actors/messages.hpp"
#include "actors/sweep_actor.hpp"
#include "cli/command_line.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/interrupt.hpp"
#include "coordinator/live_status.hpp"
#include "cli/report_files.hpp"
#include "cli/report_input.hpp"
#include "coordinator/run_setup.hpp"
#include "coordinator/status_file.hpp"
#include "config/sweep_config.hpp"
#include "workloads/workload_catalog.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace palladium {
namespace {

// A run config text for the cell that times the hand-tuned references of the
// sweep's priority workloads (those with a reference in workloads/catalog.json)
// on the sweep's own agents (Table 3), or "" when no cell has a priority workload.
std::string reference_config(const SweepConfig& sweep) {
  std::vector<std::string> refs;
  for (const auto& w : workload_catalog().hand_tuned_ids()) {
    for (const auto& cell : sweep.cells)
      if (std::count(cell.config.workloads.begin(), cell.config.workloads.end(), w)) {
        refs.push_back(w);
        break;
      }
  }
  if (refs.empty()) return "";
  YAML::Node base = YAML::Load(sweep.base.text);
  YAML::Node cfg(YAML::NodeType::Map);
  cfg["name"] = sweep.name + "[" + kReferenceCellKey + "]";
  cfg["method"] = "iterative";
  YAML::Node workloads(YAML::NodeType::Sequence);
  for (const auto& w : refs) workloads.push_back(w);
  workloads.SetStyle(YAML::EmitterStyle::Flow);
  cfg["workloads"] = workloads;
  cfg["budget_per_workload"] = 1;
  YAML::Node seeds(YAML::NodeType::Sequence);
  seeds.push_back(0);
  cfg["seeds"] = seeds;
  cfg["llm"]["provider"] = "hand_tuned";
  if (base["evaluation"]) cfg["evaluation"] = base["evaluation"];
  YAML::Emitter out;
  out << cfg;
  return std::string(out.c_str()) + "\n";
}

// The llm section of a cell's config, as text: cells with equal sections share a gateway.
std::string llm_key(const std::string& config_text) {
  YAML::Emitter out;
  out << YAML::Load(config_text)["llm"];
  return out.c_str();
}

}  // namespace

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

  // Every cell is validated, and the files it names checked, before the
  // database is touched.
  fs::path home = palladium_home();
  SweepConfig sweep;
  struct CellSetup {
    std::string key, params_json;
    int ordinal = 0;
    RunConfig config;
    std::vector<WorkloadSearchSpec> searches;
    std::string llm;
  };
  std::vector<CellSetup> setups;
  std::map<std::string, LlmBackend> backends;  // llm_key -> what its gateway drives
  try {
    sweep = load_sweep_config(sweep_path);
    if (concurrency > 0) sweep.concurrency = concurrency;
    if (agents >= 0) sweep.base.agents.local = agents;
    std::string ref_text = reference_config(sweep);
    if (!ref_text.empty()) {
      auto ref = parse_run_config(ref_text, sweep_path + ": the reference cell");
      setups.push_back({kReferenceCellKey, R"({"reference":"hand_tuned"})",
                        static_cast<int>(sweep.cells.size()), ref,
                        search_specs(ref, sweep_path, home), llm_key(ref.text)});
      backends[setups.back().llm] = make_llm_backend(ref.llm, sweep_path, home);
    }
    for (const auto& cell : sweep.cells) {
      const std::string origin = sweep_path + ": cell " + cell.key;
      setups.push_back({cell.key, cell.params_json, cell.ordinal, cell.config,
                        search_specs(cell.config, origin, home), llm_key(cell.config.text)});
      if (!backends.count(setups.back().llm))
        backends[setups.back().llm] = make_llm_backend(cell.config.llm, origin, home);
    }
  } catch (const ConfigError& e) {
    std::cerr << "palladium sweep: " << e.what() << "\n";
    return 2;
  }

  if (db_path.empty()) db_path = default_db_path(home, sweep.name);
  std::shared_ptr<RunStore> store;
  int64_t sweep_id = 0;
  std::vector<int64_t> cell_ids;
  try {
    store = RunStore::open(db_path);
    sweep_id = store->begin_or_resume_sweep(sweep.name, sweep.text);
    for (const auto& s : setups) {
      CellRecord rec;
      rec.sweep_id = sweep_id;
      rec.cell_key = s.key;
      rec.ordinal = s.ordinal;
      rec.params_json = s.params_json;
      rec.config_text = s.config.text;
      cell_ids.push_back(store->put_cell(rec));
    }
  } catch (const std::exception& e) {
    std::cerr << "palladium sweep: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "[palladium] sweep " << sweep_id << " (" << sweep.name << "): " << setups.size()
            << " cells -> " << db_path << "\n";

  std::unique_ptr<Coordinator> coordinator;
  try {
    auto options = coordinator_options(sweep.base, db_path + ".logs");
    // A TPU time below the v6e roofline is suspect too (the dispatcher's plausibility gate).
    if (sweep.base.evaluation.backend == "tpu")
      options.dispatch.checks.costs =
          load_workload_costs(palladium_home() / "workloads" / "workload_costs.json");
    coordinator = std::make_unique<Coordinator>(std::move(options));
  } catch (const CoordinatorError& e) {
    std::cerr << "palladium sweep: " << sweep_path << ": base " << e.key() << ": " << e.what()
              << "\n";
    return 2;
  }
  auto first = backends.begin();
  coordinator->start_services(store, first->second.runner, first->second.options);
  std::map<std::string, LlmGatewayActor> gateways{{first->first, coordinator->llm_gateway()}};
  for (auto it = std::next(backends.begin()); it != backends.end(); ++it)
    gateways[it->first] = coordinator->add_llm_gateway(it->second.runner, it->second.options);
  coordinator->start_local_agents();

  SweepPlan plan;
  plan.concurrency = sweep.concurrency;
  int64_t sample_cap = 0;
  for (size_t i = 0; i < setups.size(); ++i) {
    SweepCellPlan c;
    c.cell_id = cell_ids[i];
    c.key = setups[i].key;
    c.run_name = setups[i].config.name;
    c.config_text = setups[i].config.text;
    c.run = run_plan(setups[i].config, 0, std::move(setups[i].searches), false);
    c.llm_gateway = gateways.at(setups[i].llm);
    sample_cap += static_cast<int64_t>(c.run.searches.size()) * c.run.budget_per_search;
    plan.cells.push_back(std::move(c));
  }
  auto sweep_actor = spawn_sweep(coordinator->system(), std::move(plan), coordinator->store(),
                                 coordinator->dispatcher());
  auto finished = std::async(std::launch::async, [&sys = coordinator->system(), sweep_actor] {
    caf::scoped_actor self{sys};
    std::optional<SweepOutcome> out;
    self->request(sweep_actor, caf::infinite, start_atom::value)
        .receive([&](SweepOutcome& o) { out = std::move(o); }, [](caf::error&) {});
    return out;
  });

  const fs::path status_path = status_file_path(db_path);
  {
    // Between polls, the live half of `palladium status` (coordinator/status_file.hpp).
    //
    // The waiting thread asks through a scoped_actor, which the actor system
    // counts as running until it is destroyed: CAF 0.17 registers it even when
    // constructed hidden (scoped_actor(sys, true) spawns with no_spawn_options,
    // so the hide flag never reaches launch()). Alive at shutdown(), it kept
    // await_all_actors_done() waiting forever after the last cell had ended, so
    // it lives only in this block.
    caf::scoped_actor asker{coordinator->system()};
    auto running_runs = [&] {
      std::vector<int64_t> ids;
      asker->request(sweep_actor, std::chrono::seconds(2), running_runs_atom::value)
          .receive([&](std::vector<int64_t>& r) { ids = std::move(r); }, [](caf::error&) {});
      return ids;
    };
    std::vector<LlmGatewayActor> gateway_list;
    for (const auto& [name, gateway] : gateways) gateway_list.push_back(gateway);
    LiveStatusWriter live(coordinator->system(), coordinator->dispatcher(), gateway_list,
                          status_path, "sweep", sample_cap);
    auto end = coordinator->wait(
        [&] {
          if (finished.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return true;
          live.maybe_write(running_runs);
          return false;
        },
        Coordinator::AgentLoss::all);
    if (end != Coordinator::WaitEnd::ready) {
      bool interrupted = end == Coordinator::WaitEnd::interrupted;
      std::string reason = interrupted ? "signal " + std::to_string(interrupt_signal())
                                       : std::string("no local agents left");
      std::cerr << "\n[palladium] " << reason << "; stopping the sweep. Everything so far is "
                << "stored: rerun with --db " << db_path << " to resume.\n";
      for (auto run_id : running_runs())
        coordinator->mark_run(run_id, interrupted ? "interrupted" : "incomplete", reason);
      std::error_code ignored;
      fs::remove(status_path, ignored);
      coordinator->abandon(interrupted ? 128 + interrupt_signal() : 1);
    }
  }
  auto outcome = finished.get();
  coordinator->shutdown();
  std::error_code ignored;
  fs::remove(status_path, ignored);
  if (!outcome) {
    std::cerr << "palladium sweep: the sweep actor gave no outcome\n";
    return 1;
  }
  std::cerr << "[palladium] sweep " << sweep_id << " ended; database " << db_path << "\n";
  for (const auto& [key, status] : outcome->cells) std::cout << key << "\t" << status << "\n";

  if (!out_dir.empty()) {
    try {
      auto reader = RunStore::open(db_path, RunStore::Mode::read_only);
      auto input = collect_report_input(
          *reader, sweep_id, load_input_sensitivity(home / "workloads" / "input_sensitivity.json"));
      input.costs = load_workload_costs(home / "workloads" / "workload_costs.json");
      auto report = sweep_report_json(input);
      write_report_files(out_dir, input, report, [&](int64_t id) {
        auto s = reader->find_sample(id);
        return s ? s->code : std::string();
      });
      plot_report(out_dir, home);
      std::cerr << "[palladium] report written to " << out_dir << "/report.md\n";
    } catch (const std::exception& e) {
      std::cerr << "palladium sweep: cannot write the report: " << e.what() << "\n";
      return 1;
    }
  }
  return outcome->all_finished() ? 0 : 1;
}

}  // namespace palladium
