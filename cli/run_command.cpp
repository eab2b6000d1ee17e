// `palladium run CONFIG [--db FILE]`: one search run on this machine plus any
// agents that connect to it.
#include "cli/commands.hpp"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/messages.hpp"
#include "actors/run_actor.hpp"
#include "cli/coordinator.hpp"
#include "cli/run_config.hpp"
#include "llm/replay_provider.hpp"
#include "store/run_report.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace palladium {
namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads the first string assigned to NAME = "..." in a workload module, so the
// coordinator can name workloads without importing Python.
std::string module_name(const std::string& source, const std::string& fallback) {
  auto pos = source.find("\nNAME = ");
  if (pos == std::string::npos) return fallback;
  auto q1 = source.find_first_of("\"'", pos);
  auto q2 = q1 == std::string::npos ? q1 : source.find(source[q1], q1 + 1);
  if (q2 == std::string::npos) return fallback;
  return source.substr(q1 + 1, q2 - q1 - 1);
}

std::string default_db_path(const fs::path& home, const std::string& name) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  auto dir = home / "runs";
  fs::create_directories(dir);
  return (dir / (name + "-" + stamp + "-" + std::to_string(getpid()) + ".db")).string();
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium run CONFIG [options]");
  std::string config_path, db_path, listen;
  int agents = -1;
  bool no_progress = false, no_report = false;
  opts.add_options()("help,h", "show this help")(
      "db", po::value(&db_path), "run database (default: a new file under runs/); an existing "
                                 "database with the same config resumes that run")(
      "agents", po::value(&agents), "local agent processes to start (overrides agents.local)")(
      "listen", po::value(&listen), "endpoint agents connect to (overrides agents.listen)")(
      "no-progress", po::bool_switch(&no_progress), "print progress as lines, not a live line")(
      "no-report", po::bool_switch(&no_report), "do not print the report at the end");
  po::options_description hidden;
  hidden.add_options()("config", po::value(&config_path));
  po::positional_options_description pos;
  pos.add("config", 1);
  po::options_description all;
  all.add(opts).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || config_path.empty()) {
    std::cout << opts << "\n";
    return vm.count("help") ? 0 : 2;
  }

  RunConfig config;
  try {
    config = load_run_config(config_path);
  } catch (const ConfigError& e) {
    std::cerr << "palladium run: " << e.what() << "\n";
    return 2;
  }
  if (agents >= 0) config.agents.local = agents;
  if (!listen.empty()) config.agents.listen = listen;

  fs::path home = palladium_home();
  std::vector<WorkloadSearchSpec> searches;
  for (const auto& id : config.workloads) {
    auto module = home / "workloads" / ("wl_" + id + ".py");
    if (!fs::exists(module)) {
      std::cerr << "palladium run: " << config_path << ": workloads: no workload '" << id
                << "' (expected " << module.string() << ")\n";
      return 2;
    }
    WorkloadBrief brief;
    brief.id = id;
    brief.baseline_source = read_file(module);
    brief.name = module_name(brief.baseline_source, id);
    for (auto seed : config.seeds) {
      WorkloadSearchSpec spec;
      spec.brief = brief;
      spec.method = config.search.method;
      spec.llm_provider = config.llm.provider;
      spec.seed = seed;
      spec.budget = config.search.budget_per_workload;
      spec.timeout_s = config.evaluation.timeout_s;
      spec.input_seeds = config.evaluation.input_seeds;
      spec.require_pallas = config.evaluation.require_pallas;
      searches.push_back(std::move(spec));
    }
  }

  std::shared_ptr<Provider> provider;
  try {
    provider = make_replay_provider(home / config.llm.corpus);
  } catch (const std::exception& e) {
    std::cerr << "palladium run: " << config_path << ": llm: " << e.what() << "\n";
    return 2;
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
  for (auto& s : searches) s.run_id = run_id;
  std::cerr << "[palladium] run " << run_id << " (" << config.name << ") -> " << db_path << "\n";

  CoordinatorOptions copts;
  copts.scheduler_threads = config.coordinator.scheduler_threads;
  copts.listen = config.agents.listen;
  copts.ledger.heartbeat = std::chrono::milliseconds(config.agents.heartbeat_ms);
  copts.ledger.liveness = config.agents.liveness;
  copts.local_agents = config.agents.local;
  copts.agent.backend = config.evaluation.backend;
  copts.agent.slots = config.agents.slots_per_agent;
  copts.agent.log_dir = db_path + ".logs";
  copts.agent.heartbeat_ms = config.agents.heartbeat_ms;
  copts.agent.liveness = config.agents.liveness;
  std::unique_ptr<Coordinator> coordinator;
  try {
    coordinator = std::make_unique<Coordinator>(copts);
  } catch (const CoordinatorError& e) {
    std::cerr << "palladium run: " << config_path << ": " << e.key() << ": " << e.what() << "\n";
    return 2;
  }
  coordinator->start_services(store, provider);
  coordinator->start_local_agents();

  RunPlan plan;
  plan.run_id = run_id;
  plan.searches = std::move(searches);
  plan.live_progress = !no_progress && isatty(STDERR_FILENO);
  auto run = spawn_run(coordinator->system(), std::move(plan), coordinator->store(),
                       coordinator->llm_gateway(), coordinator->dispatcher());

  // The run actor answers when every search has ended. Meanwhile the
  // coordinator watches the local agents: if all of them are gone the run can
  // only make progress through remote agents, and with none configured it
  // would wait forever.
  auto finished = std::async(std::launch::async, [&sys = coordinator->system(), run] {
    caf::scoped_actor self{sys};
    std::string s = "failed";
    self->request(run, caf::infinite, start_atom::value)
        .receive([&](std::string& r) { s = r; }, [&](caf::error& e) { s = "failed: " + to_string(e); });
    return s;
  });
  auto end = coordinator->wait(
      [&] { return finished.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      Coordinator::AgentLoss::all);
  if (end == Coordinator::WaitEnd::agents_lost) {
    std::cerr << "[palladium] no local agents left; stopping. Everything so far is stored: "
                 "rerun with --db "
              << db_path << " to resume.\n";
    coordinator->mark_run(run_id, "incomplete");
    // The run actor's searches are blocked on evaluations that cannot come.
    coordinator->abandon(1);
  }
  std::string status = finished.get();
  coordinator->shutdown();

  std::cerr << "[palladium] run " << run_id << " " << status << "; database " << db_path << "\n";
  if (!no_report) {
    try {
      auto reader = RunStore::open(db_path);
      std::cout << report_text(
          *reader, run_id, config.workloads,
          load_input_sensitivity(home / "workloads" / "input_sensitivity.json"));
    } catch (const std::exception& e) {
      std::cerr << "palladium run: cannot build the report: " << e.what() << "\n";
      return 1;
    }
  }
  return status == "finished" ? 0 : 1;
}

}  // namespace palladium
