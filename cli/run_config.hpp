// RunConfig: one search run as the experimenter wrote it in YAML.
//
// load_run_config() validates everything up front so that a typo fails in the
// first second, naming the file and the key, instead of an hour into a sweep.
// Unknown keys are errors for the same reason.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace palladium {

struct RunConfig {
  std::string name;
  std::string method = "iterative";
  std::vector<std::string> workloads;
  int budget_per_workload = 8;
  std::vector<uint64_t> seeds{0};

  std::string llm_provider = "replay";
  std::string llm_corpus = "llm/replay_corpus";  // relative to PALLADIUM_HOME

  std::string backend = "interpret";
  double timeout_s = 60;
  std::vector<int64_t> input_seeds{0, 1};
  // Off only for experiments that accept plain-JAX rewrites as candidates.
  bool require_pallas = true;

  int local_agents = 2;
  int slots_per_agent = 1;
  std::string listen = "tcp://127.0.0.1:0";
  int heartbeat_ms = 500;
  int liveness = 4;

  std::string text;  // the YAML as read: stored with the run, hashed for resume
};

// Thrown for any problem with a config; what() names the file and the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses and validates YAML text; `origin` names the source in error messages.
RunConfig parse_run_config(const std::string& yaml_text, const std::string& origin);

// Reads and parses a file. Throws ConfigError if it cannot be read or is invalid.
RunConfig load_run_config(const std::string& path);

}  // namespace palladium
