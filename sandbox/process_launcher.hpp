// How a supervisor (the agent, for its judges) starts a child process: an interface, so that
// what it does with the child can be tested without starting one for real.
//
//   SandboxedLauncher   fork + execve (no shell) in a new process group, with the given
//                       environment only, rlimits lowered, no core dumps, every fd but the
//                       given ones closed, and a fresh network namespace when run as root
//                       (docs/verification.md, "Sandbox")
//   tests/sandbox/fake_process_launcher.hpp   records each spec and keeps the child's ends
//
// The candidate sandbox itself (bubblewrap + seccomp) is palladium-sandbox
// (sandbox/candidate_sandbox.hpp), which the judge starts.

#ifndef PALLADIUM_SANDBOX_PROCESS_LAUNCHER_HPP_
#define PALLADIUM_SANDBOX_PROCESS_LAUNCHER_HPP_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace palladium::sandbox {

// Limits the child gets before exec; -1 leaves the inherited one. A limit is only ever lowered
// (never above the inherited hard limit).
struct ChildLimits {
  int64_t address_space_bytes = -1;  // RLIMIT_AS
  int64_t cpu_seconds = -1;          // RLIMIT_CPU soft; hard = soft + 30
  int64_t file_size_bytes = -1;      // RLIMIT_FSIZE
  int64_t open_files = -1;           // RLIMIT_NOFILE
  bool new_network_namespace = false;  // unshare(CLONE_NEWNET), only when euid == 0
};

struct LaunchSpec {
  std::string executable;         // a path, or a bare name looked up on this process's PATH
  std::vector<std::string> argv;  // argv[0] first
  std::vector<std::string> env;   // the child's whole environment, "NAME=value"
  std::string cwd;
  int output_fd = -1;             // the child's fds 1 and 2 (its stdin is /dev/null)
  std::vector<int> fds;           // the child's fds 3, 4, ... in this order
  ChildLimits limits;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;

  // Starts `spec` as a child of this process, leader of a new process group (its pgid is its
  // pid), and returns its pid; the caller signals the group and reaps the child. The caller
  // keeps its own copies of the spec's fds (and closes them). On failure returns -1 and sets
  // *error to why (e.g. execve's errno text); nothing is left running.
  virtual pid_t launch(const LaunchSpec& spec, std::string* error) = 0;
};

// The real one. Between fork and exec the child makes only async-signal-safe calls (the
// caller may be multi-threaded); an exec failure comes back to launch() as its errno.
class SandboxedLauncher final : public ProcessLauncher {
 public:
  pid_t launch(const LaunchSpec& spec, std::string* error) override;
};

}  // namespace palladium::sandbox

#endif  // PALLADIUM_SANDBOX_PROCESS_LAUNCHER_HPP_
