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

#include "actors/errors.hpp"
#include "actors/eval_dispatcher.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/messages.hpp"
#include "actors/run_actor.hpp"
#include "actors/store_actor.hpp"
#include "cli/local_agents.hpp"
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

// The endpoint local agents dial: the bound one, with a wildcard host made local.
std::string local_connect_endpoint(std::string bound) {
  for (const char* any : {"0.0.0.0", "*"}) {
    auto pos = bound.find(any);
    if (pos != std::string::npos) bound.replace(pos, std::string(any).size(), "127.0.0.1");
  }
  return bound;
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
  if (agents >= 0) config.local_agents = agents;
  if (!listen.empty()) config.listen = listen;

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
      spec.method = config.method;
      spec.llm_provider = config.llm_provider;
      spec.seed = seed;
      spec.budget = config.budget_per_workload;
      spec.timeout_s = config.timeout_s;
      spec.input_seeds = config.input_seeds;
      spec.require_pallas = config.require_pallas;
      searches.push_back(std::move(spec));
    }
  }

  std::shared_ptr<Provider> provider;
  try {
    provider = make_replay_provider(home / config.llm_corpus);
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

  caf::actor_system_config cfg;
  register_error_category(cfg);
  // CAF defaults to max(cores, 4) threads; on small hosts that costs latency.
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.console.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};

  std::shared_ptr<ZmqBridge> bridge;
  try {
    bridge = std::make_shared<ZmqBridge>(config.listen);
  } catch (const std::exception& e) {
    std::cerr << "palladium run: " << config_path << ": agents.listen: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "[palladium] agents connect to " << bridge->endpoint() << "\n";
  if (bridge->endpoint().find("tcp://127.") != 0)
    std::cerr << "[palladium] WARNING: " << bridge->endpoint()
              << " is reachable beyond this machine and the link is not encrypted or "
                 "authenticated yet (CURVE is not implemented): use it only on a trusted "
                 "network.\n";

  JobLedger::Options ledger;
  ledger.heartbeat = std::chrono::milliseconds(config.heartbeat_ms);
  ledger.liveness = config.liveness;
  auto store_actor = spawn_store(sys, store);
  auto gateway = spawn_llm_gateway(sys, provider);
  auto dispatcher = spawn_eval_dispatcher(sys, bridge, ledger);

  LocalAgents local;
  LocalAgentSpec agent_spec;
  agent_spec.connect = local_connect_endpoint(bridge->endpoint());
  agent_spec.backend = config.backend;
  agent_spec.slots = config.slots_per_agent;
  agent_spec.log_dir = db_path + ".logs";
  agent_spec.heartbeat_ms = config.heartbeat_ms;
  agent_spec.liveness = config.liveness;
  fs::create_directories(agent_spec.log_dir);
  local.start(config.local_agents, agent_spec);
  if (config.local_agents == 0)
    std::cerr << "[palladium] no local agents; waiting for agents to connect\n";

  RunPlan plan;
  plan.run_id = run_id;
  plan.searches = std::move(searches);
  plan.live_progress = !no_progress && isatty(STDERR_FILENO);
  auto run = spawn_run(sys, std::move(plan), store_actor, gateway, dispatcher);

  // The run actor answers when every search has ended. Meanwhile watch the
  // local agents: if all of them are gone the run can only make progress
  // through remote agents, and with none configured it would wait forever.
  auto finished = std::async(std::launch::async, [&sys, run] {
    caf::scoped_actor self{sys};
    std::string s = "failed";
    self->request(run, caf::infinite, start_atom::value)
        .receive([&](std::string& r) { s = r; }, [&](caf::error& e) { s = "failed: " + to_string(e); });
    return s;
  });
  std::string status;
  int local_alive = config.local_agents;
  while (finished.wait_for(std::chrono::milliseconds(250)) != std::future_status::ready) {
    if (auto how = local.exited_status()) {
      --local_alive;
      std::cerr << "\n[palladium] a local agent exited (" << *how << "); " << local_alive
                << " left\n";
      if (local_alive == 0 && config.local_agents > 0) {
        std::cerr << "[palladium] no local agents left; stopping. Everything so far is stored: "
                     "rerun with --db "
                  << db_path << " to resume.\n";
        // A connection of our own: the store actor owns `store` on its thread.
        RunStore::open(db_path)->finish_run(run_id, "incomplete");
        std::cout.flush();
        _exit(1);  // the run actor's searches are blocked on evaluations that cannot come
      }
    }
  }
  status = finished.get();
  local.stop();
  for (auto& a : {dispatcher, gateway, store_actor})
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  sys.await_all_actors_done();
  bridge->stop();

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
