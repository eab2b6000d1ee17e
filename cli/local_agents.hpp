// LocalAgents: the agent processes `palladium run` starts on this machine.
//
// Each is this same binary run as `palladium agent --connect ENDPOINT ...`.
// They are ordinary agents: the coordinator treats them exactly like remote
// ones. They are started with PR_SET_PDEATHSIG so a coordinator that dies
// (even by SIGKILL) takes them with it instead of leaving them reconnecting
// forever.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace palladium {

struct LocalAgentSpec {
  std::string connect;  // tcp://127.0.0.1:PORT
  std::string backend;
  int slots = 1;
  std::string log_dir;
  int heartbeat_ms = 500;
  int liveness = 4;
};

class LocalAgents {
 public:
  LocalAgents() = default;
  ~LocalAgents() { stop(); }
  LocalAgents(const LocalAgents&) = delete;
  LocalAgents& operator=(const LocalAgents&) = delete;

  // Starts `count` agents; throws std::runtime_error if one cannot be started.
  void start(int count, const LocalAgentSpec& spec);
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
