#include "coordinator/local_agents.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "protocol/curve_keys.hpp"

extern char** environ;

namespace palladium {

std::vector<std::string> agent_environment(char** env) {
  static const char* const kExact[] = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ",
                                       "TMPDIR", "TERM", "SPDLOG_LEVEL"};
  std::vector<std::string> out;
  for (char** e = env; e && *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    bool keep = name.rfind("LC_", 0) == 0 || name.rfind("PALLADIUM_", 0) == 0;
    for (const char* k : kExact) keep = keep || name == k;
    if (keep) out.push_back(kv);
  }
  return out;
}

std::vector<std::string> LocalAgents::start(int count, const LocalAgentSpec& spec) {
  std::vector<std::string> public_keys;
  std::vector<std::string> env_strings = agent_environment(environ);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (int i = 0; i < count; ++i) {
    keys::KeyPair pair;
    int key_pipe[2] = {-1, -1};
    std::vector<std::string> args{"palladium",
                                  "agent",
                                  "--connect",
                                  spec.connect,
                                  "--backend",
                                  spec.backend,
                                  "--slots",
                                  std::to_string(spec.slots),
                                  "--agent-id",
                                  "local" + std::to_string(i + 1),
                                  "--heartbeat-ms",
                                  std::to_string(spec.heartbeat_ms),
                                  "--liveness",
                                  std::to_string(spec.liveness),
                                  "--log-dir",
                                  spec.log_dir + "/local" + std::to_string(i + 1)};
    if (!spec.server_key.empty()) {
      pair = keys::generate();
      // The child reads one line and closes it; the write end never leaves this process.
      if (::pipe2(key_pipe, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a key pipe");
      args.insert(args.end(), {"--server-key", spec.server_key, "--key-fd", "3"});
    }
    for (const auto& a : spec.extra_args) args.push_back(a);
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
      if (key_pipe[0] >= 0) {
        // dup2 clears FD_CLOEXEC on fd 3; every other descriptor here is close-on-exec.
        if (dup2(key_pipe[0], 3) < 0) _exit(126);
      }
      execve("/proc/self/exe", argv.data(), envp.data());
      _exit(127);
    }
    if (key_pipe[0] >= 0) {
      ::close(key_pipe[0]);
      std::string line = pair.secret_key + "\n";
      [[maybe_unused]] ssize_t n = ::write(key_pipe[1], line.data(), line.size());
      ::close(key_pipe[1]);
      // The secret now lives only in the child; forget it here.
      std::fill(pair.secret_key.begin(), pair.secret_key.end(), '\0');
    }
    spdlog::info("local agent {} started (pid {})", i + 1, pid);
    pids_.push_back(pid);
    public_keys.push_back(pair.public_key);
  }
  return public_keys;
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
