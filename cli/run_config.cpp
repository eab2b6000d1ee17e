#include "cli/run_config.hpp"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace palladium {
namespace {

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(origin_ + ": " + key + ": " + what);
  }

  void check_keys(const YAML::Node& map, const std::string& where,
                  const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(where.empty() ? "(top level)" : where, "expected a mapping");
    for (const auto& kv : map) {
      auto key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(where.empty() ? key : where + "." + key, "unknown key (expected one of: " + list + ")");
      }
    }
  }

  template <class T>
  void get(const YAML::Node& map, const std::string& key, const std::string& path, T& out) const {
    auto node = map[key];
    if (!node) return;
    try {
      out = node.as<T>();
    } catch (const YAML::Exception&) {
      fail(path, "has the wrong type (value: " + YAML::Dump(node) + ")");
    }
  }

 private:
  std::string origin_;
};

}  // namespace

RunConfig parse_run_config(const std::string& yaml_text, const std::string& origin) {
  Reader r(origin);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(origin + ": YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                      ": " + e.msg);
  }
  RunConfig c;
  c.text = yaml_text;
  r.check_keys(root, "", {"name", "method", "workloads", "budget_per_workload", "seeds", "llm",
                          "evaluation", "agents"});
  r.get(root, "name", "name", c.name);
  r.get(root, "method", "method", c.method);
  r.get(root, "workloads", "workloads", c.workloads);
  r.get(root, "budget_per_workload", "budget_per_workload", c.budget_per_workload);
  r.get(root, "seeds", "seeds", c.seeds);
  if (auto llm = root["llm"]) {
    r.check_keys(llm, "llm", {"provider", "corpus"});
    r.get(llm, "provider", "llm.provider", c.llm_provider);
    r.get(llm, "corpus", "llm.corpus", c.llm_corpus);
  }
  if (auto ev = root["evaluation"]) {
    r.check_keys(ev, "evaluation", {"backend", "timeout_s", "input_seeds", "require_pallas"});
    r.get(ev, "backend", "evaluation.backend", c.backend);
    r.get(ev, "timeout_s", "evaluation.timeout_s", c.timeout_s);
    r.get(ev, "input_seeds", "evaluation.input_seeds", c.input_seeds);
    r.get(ev, "require_pallas", "evaluation.require_pallas", c.require_pallas);
  }
  if (auto ag = root["agents"]) {
    r.check_keys(ag, "agents", {"local", "slots_per_agent", "listen", "heartbeat_ms", "liveness"});
    r.get(ag, "local", "agents.local", c.local_agents);
    r.get(ag, "slots_per_agent", "agents.slots_per_agent", c.slots_per_agent);
    r.get(ag, "listen", "agents.listen", c.listen);
    r.get(ag, "heartbeat_ms", "agents.heartbeat_ms", c.heartbeat_ms);
    r.get(ag, "liveness", "agents.liveness", c.liveness);
  }

  if (c.name.empty()) r.fail("name", "is required");
  if (c.method != "iterative")
    r.fail("method", "'" + c.method + "' is not implemented (available: iterative)");
  if (c.workloads.empty()) r.fail("workloads", "must list at least one workload id");
  static const std::regex id_re("^[0-9]+[pk]$");
  std::set<std::string> seen;
  for (const auto& w : c.workloads) {
    if (!std::regex_match(w, id_re)) r.fail("workloads", "'" + w + "' is not a JAXBench id like 8p or 41k");
    if (!seen.insert(w).second) r.fail("workloads", "'" + w + "' is listed twice");
  }
  if (c.budget_per_workload < 1) r.fail("budget_per_workload", "must be >= 1");
  if (c.seeds.empty()) r.fail("seeds", "must list at least one seed");
  if (c.llm_provider != "replay")
    r.fail("llm.provider", "'" + c.llm_provider + "' is not implemented (available: replay)");
  if (c.backend != "interpret" && c.backend != "tpu")
    r.fail("evaluation.backend", "must be 'interpret' or 'tpu', not '" + c.backend + "'");
  if (!(c.timeout_s > 0)) r.fail("evaluation.timeout_s", "must be > 0");
  if (c.input_seeds.empty()) r.fail("evaluation.input_seeds", "must list at least one seed");
  if (c.local_agents < 0) r.fail("agents.local", "must be >= 0");
  if (c.slots_per_agent < 1) r.fail("agents.slots_per_agent", "must be >= 1");
  if (c.listen.rfind("tcp://", 0) != 0) r.fail("agents.listen", "must be a tcp:// endpoint");
  if (c.heartbeat_ms < 10) r.fail("agents.heartbeat_ms", "must be >= 10");
  if (c.liveness < 2) r.fail("agents.liveness", "must be >= 2");
  return c;
}

RunConfig load_run_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the config file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_run_config(ss.str(), path);
}

}  // namespace palladium
