#include "cli/local_agents.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

namespace palladium {

void LocalAgents::start(int count, const LocalAgentSpec& spec) {
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> args{"palladium",
                                  "agent",
                                  "--connect",
                                  spec.connect,
                                  "--backend",
                                  spec.backend,
                                  "--slots",
                                  std::to_string(spec.slots),
                                  "--agent-id",
                                  "local" + std::to_string(i + 1) + "-" + std::to_string(getpid()),
                                  "--heartbeat-ms",
                                  std::to_string(spec.heartbeat_ms),
                                  "--liveness",
                                  std::to_string(spec.liveness),
                                  "--log-dir",
                                  spec.log_dir};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot fork a local agent");
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
      execv("/proc/self/exe", argv.data());
      _exit(127);
    }
    spdlog::info("local agent {} started (pid {})", i + 1, pid);
    pids_.push_back(pid);
  }
}

std::optional<std::string> LocalAgents::exited_status() {
  for (auto it = pids_.begin(); it != pids_.end(); ++it) {
    int status = 0;
    if (waitpid(*it, &status, WNOHANG) == *it) {
      pids_.erase(it);
      if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
      return "killed by signal " + std::to_string(WTERMSIG(status));
    }
  }
  return std::nullopt;
}

void LocalAgents::stop() {
  for (auto pid : pids_) kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (auto pid : pids_) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  pids_.clear();
}

}  // namespace palladium
