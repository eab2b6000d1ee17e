// The agents section of a run config: where evaluations run.
//
// YAML:
//   agents:
//     local: 2                     # agent processes started on this machine
//     slots_per_agent: 1           # judges per local agent
//     listen: tcp://127.0.0.1:0    # where agents connect (0: any free port)
//     heartbeat_ms: 500
//     liveness: 4                  # missed heartbeats before an agent is dead
//     eval_heartbeat_max_ms: 10000 # the interval follows long evaluations up to this
//                                  # (actors/job_ledger.hpp); <= heartbeat_ms pins it
//     server_key: keys/coordinator.key_secret  # default: a fresh key pair for this run
//     allow: keys/agents           # allowlist: a directory of .key files or a file of keys
//     insecure_plaintext: false    # no CURVE at all (a network you trust completely)
//
// Owner of the semantics: the fleet engineer (actors/eval_dispatcher*,
// actors/job_ledger*, coordinator/local_agents*).
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "config/config_reader.hpp"

namespace palladium {

struct AgentsConfig {
  int local = 2;
  int slots_per_agent = 1;
  std::string listen = "tcp://127.0.0.1:0";
  int heartbeat_ms = 500;
  int liveness = 4;
  int eval_heartbeat_max_ms = 10000;
  // The authenticated link (actors/zmq_bridge.hpp); local agents are always allowed.
  std::string server_key;
  std::string allow;
  bool insecure_plaintext = false;
};

// Reads and validates the `agents` mapping (`node` may be null).
AgentsConfig parse_agents_config(const ConfigReader& r, const YAML::Node& node);

// The command line's overrides of the section (`palladium run --agents/--listen/...`); a field
// left unset keeps the config's value.
struct AgentsOverrides {
  int local = -1;
  std::string listen, server_key, allow;
  bool insecure_plaintext = false;
};
void apply_overrides(const AgentsOverrides& overrides, AgentsConfig& config);

}  // namespace palladium
