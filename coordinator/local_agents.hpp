// LocalAgents: the agent processes `palladium run` starts on this machine.
//
// Each is this same binary run as `palladium agent --connect ENDPOINT ...`. They are ordinary
// agents: the coordinator treats them exactly like remote ones, over the same authenticated
// link. Each gets a fresh CURVE key pair; its secret key reaches it through an inherited pipe
// (never a file, the command line or the environment), and start() returns the public keys
// for the coordinator's allowlist. The child's environment is an allowlist (PATH, HOME, the
// locale, TMPDIR and PALLADIUM_* settings): API keys and other secrets of the coordinator
// never reach an agent. They are started with PR_SET_PDEATHSIG so a coordinator that dies
// (even by SIGKILL) takes them with it instead of leaving them reconnecting forever.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace palladium {

struct LocalAgentSpec {
  std::string connect;     // tcp://127.0.0.1:PORT
  std::string server_key;  // the coordinator's public key (Z85); empty = plaintext loopback
  std::string backend;
  int slots = 1;
  std::string log_dir;
  int heartbeat_ms = 500;
  int liveness = 4;
  std::vector<std::string> extra_args;  // appended to each agent's command line
};

// The environment a local agent gets from `env` (a NULL-terminated array like environ): only
// the allowlisted variables. Exposed for tests.
std::vector<std::string> agent_environment(char** env);

class LocalAgents {
 public:
  LocalAgents() = default;
  ~LocalAgents() { stop(); }
  LocalAgents(const LocalAgents&) = delete;
  LocalAgents& operator=(const LocalAgents&) = delete;

  // Starts `count` agents and returns their public keys (empty strings on a plaintext link),
  // which the caller must allow before the agents connect (they retry until then). Throws
  // std::runtime_error if one cannot be started.
  std::vector<std::string> start(int count, const LocalAgentSpec& spec);
  // SIGTERM, a grace period, then SIGKILL; reaps every child. Idempotent.
  void stop();
  const std::vector<pid_t>& pids() const { return pids_; }
  // If an agent has exited, reaps it and describes how ("exit status 2");
  // nullopt while all run.
  std::optional<std::string> exited_status();

 private:
  std::vector<pid_t> pids_;
};

}  // namespace palladium
