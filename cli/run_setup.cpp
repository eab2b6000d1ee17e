#include "cli/run_setup.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "llm/hand_tuned_provider.hpp"
#include "llm/replay_provider.hpp"

namespace fs = std::filesystem;

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

}  // namespace

std::vector<WorkloadSearchSpec> search_specs(const RunConfig& config, const std::string& origin,
                                             const fs::path& home) {
  check_run_config_files(config, origin, home);
  std::vector<WorkloadSearchSpec> searches;
  for (const auto& id : config.workloads) {
    WorkloadBrief brief;
    brief.id = id;
    brief.baseline_source = read_file(home / "workloads" / ("wl_" + id + ".py"));
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
  return searches;
}

std::shared_ptr<Provider> make_provider(const LlmConfig& llm, const std::string& origin,
                                        const fs::path& home) {
  if (llm.provider == "replay") return make_replay_provider(home / llm.corpus);
  if (llm.provider == "hand_tuned") return make_hand_tuned_provider(home / "workloads" / "hand_tuned");
  throw ConfigError(origin + ": llm.provider: '" + llm.provider + "' is not implemented");
}

CoordinatorOptions coordinator_options(const RunConfig& config, const std::string& log_dir) {
  CoordinatorOptions o;
  o.scheduler_threads = config.coordinator.scheduler_threads;
  o.link.listen = config.agents.listen;
  o.link.server_key_file = config.agents.server_key;
  o.link.allow = config.agents.allow;
  o.link.insecure_plaintext = config.agents.insecure_plaintext;
  o.dispatch.ledger.heartbeat = std::chrono::milliseconds(config.agents.heartbeat_ms);
  o.dispatch.ledger.liveness = config.agents.liveness;
  o.local_agents = config.agents.local;
  o.agent.backend = config.evaluation.backend;
  o.agent.slots = config.agents.slots_per_agent;
  o.agent.log_dir = log_dir;
  o.agent.heartbeat_ms = config.agents.heartbeat_ms;
  o.agent.liveness = config.agents.liveness;
  return o;
}

std::string default_db_path(const fs::path& home, const std::string& name) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  auto dir = home / "runs";
  fs::create_directories(dir);
  return (dir / (name + "-" + stamp + "-" + std::to_string(getpid()) + ".db")).string();
}

}  // namespace palladium
