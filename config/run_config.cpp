#include "config/run_config.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "workloads/workload_catalog.hpp"

namespace palladium {
namespace {

// Keys of the run as a whole; each section adds its own (one per line, so
// that engineers adding sections do not collide).
std::set<std::string> top_level_keys() {
  std::set<std::string> keys{
      "name",
      "workloads",
      "seeds",
      "llm",
      "context",
      "evaluation",
      "agents",
      "coordinator",
  };
  for (const auto& k : search_config_keys()) keys.insert(k);
  return keys;
}

void check_workload_ids(const ConfigReader& r, const std::vector<std::string>& workloads) {
  if (workloads.empty()) r.fail("workloads", "must list at least one workload id");
  static const std::regex id_re("^[0-9]+[pk]$");
  for (const auto& w : workloads) {
    if (!std::regex_match(w, id_re))
      r.fail("workloads", "'" + w + "' is not a JAXBench id like 8p or 41k");
  }
}

}  // namespace

RunConfig parse_run_config(const std::string& yaml_text, const std::string& origin) {
  ConfigReader r(origin);
  YAML::Node root = r.load(yaml_text);
  RunConfig c;
  r.check_keys(root, "", top_level_keys());
  r.get(root, "name", "name", c.name);
  r.get_distinct(root, "workloads", "workloads", c.workloads);
  r.get_distinct(root, "seeds", "seeds", c.seeds);
  if (c.name.empty()) r.fail("name", "is required");
  check_workload_ids(r, c.workloads);
  if (c.seeds.empty()) r.fail("seeds", "must list at least one seed");

  c.search = parse_search_config(r, root);
  c.llm = parse_llm_config(r, root["llm"]);
  c.context = parse_context_config(r, root["context"], c.search.method);
  c.evaluation = parse_evaluation_config(r, root["evaluation"]);
  c.text = fill_judge_settings(yaml_text, root);
  c.agents = parse_agents_config(r, root["agents"]);
  c.coordinator = parse_coordinator_config(r, root["coordinator"]);
  return c;
}

RunConfig load_run_config(const std::string& path) {
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path))
    throw ConfigError(path + ": cannot read the config file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_run_config(ss.str(), path);
}

void check_run_config_files(const RunConfig& config, const std::string& origin,
                            const std::filesystem::path& home) {
  ConfigReader r(origin);
  const WorkloadCatalog& catalog = workload_catalog();
  for (const auto& id : config.workloads) {
    const WorkloadEntry* entry = catalog.find(id);
    if (!entry)
      r.fail("workloads", "no workload '" + id + "' (workloads/catalog.json lists " +
                              catalog.id_list() + ")");
    auto module = home / entry->module;
    if (!std::filesystem::is_regular_file(module))
      r.fail("workloads", "'" + id + "': its module " + module.string() + " is missing");
  }
  check_llm_files(r, config.llm, home, config.workloads);
}

}  // namespace palladium
