// The OS sandbox of a candidate process: what `palladium-sandbox` (the launcher executable,
// sandbox/palladium_sandbox_main.cpp) does before it execs bubblewrap.
// docs/verification.md "The candidate sandbox" is the contract; this is its C++ form.
//
//   judge (trusted, persistent)  --spawns-->  palladium-sandbox [options] -- COMMAND
//     palladium-sandbox: builds the three seccomp programs (seccomp_policy.hpp), sets the
//       rlimits, and when it runs as root: makes the user namespace that maps the spares' own
//       uid (sandbox_userns.hpp), enters a private mount namespace, makes the read-only paths
//       reachable for an unprivileged uid (stage_for_unprivileged), and drops to uid/gid 65534
//       with no supplementary groups; then execs
//     bwrap (as that uid): new user (as root, the launcher's), pid, mount, network, ipc, uts
//       and cgroup namespaces; no capabilities (as root, CAP_SETUID and CAP_SETGID in that
//       namespace, for the spares); uid/gid 65534 inside; nested user namespaces disabled; a
//       new session; a read-only view of /usr, /etc/ld.so.cache and the listed paths only; a
//       fresh /proc of its own pid namespace, a minimal /dev, a private size-limited tmpfs on
//       /tmp; the environment is exactly the --env list; the base seccomp program loaded; the
//       zygote and candidate programs readable at kSeccompDir; killed with its parent; then
//     COMMAND (the candidate runner's warm-spare parent, sandbox/candidate/).
// Killing the launcher's process (bwrap keeps its pid) kills bwrap's pid 1 inside, and with it
// every process of the namespace.
//
// Thread safety: the functions here are not thread-safe (they change process state); the
// launcher is single-threaded.

#ifndef PALLADIUM_SANDBOX_CANDIDATE_SANDBOX_HPP_
#define PALLADIUM_SANDBOX_CANDIDATE_SANDBOX_HPP_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/sandbox_cgroup.hpp"

namespace palladium::agent {

// Where the candidate runner finds the later stages' programs inside the sandbox.
inline constexpr const char* kSeccompDir = "/palladium/seccomp";
// The uid and gid a candidate runs as, inside and (when the agent is root) outside.
inline constexpr uid_t kSandboxUid = 65534;
inline constexpr gid_t kSandboxGid = 65534;

struct SandboxLimits {
  int64_t address_space_mb = -1;  // RLIMIT_AS per process; -1 leaves the inherited limit
  int64_t cpu_seconds = -1;       // RLIMIT_CPU per process (hard = soft + 5)
  int64_t file_size_mb = 64;      // RLIMIT_FSIZE
  int64_t open_files = 256;       // RLIMIT_NOFILE
  int64_t processes = 4096;       // RLIMIT_NPROC (threads count; per uid on the host): only
                                  // without a pids cgroup, which replaces it (sandbox_cgroup.hpp)
};

struct SandboxSpec {
  std::vector<std::pair<std::string, std::string>> read_only;  // (host path, sandbox path)
  std::vector<std::string> env;      // "NAME=value": the sandbox's whole environment
  std::string chdir = "/tmp";
  int64_t tmpfs_mb = 512;            // size of the private /tmp
  SandboxLimits limits;
  CgroupLimits cgroup;               // the sandbox's memory and pids cgroup
  std::vector<int> keep_fds;         // fds (besides 0, 1, 2) the command inherits
  std::vector<std::string> command;  // program and arguments, run inside
  bool print_only = false;           // --print-args: print the bwrap argv, do nothing
};

// Parses the launcher's command line (argv[1..]):
//   --ro PATH | --ro-at SRC DEST | --env NAME=VALUE | --chdir DIR | --tmpfs-mb N
//   --as-mb N | --cpu-s N | --fsize-mb N | --nofile N | --nproc N | --keep-fd N
//   --memory-mb N | --pids N | --cgroup-parent DIR
//   --print-args | -- COMMAND [ARGS...]
// On success returns "" and fills *spec; otherwise returns an error naming the argument.
std::string parse_sandbox_args(const std::vector<std::string>& args, SandboxSpec* spec);

// The bwrap argv (without the program name) for `spec`, given the fds that hold the base,
// zygote and candidate seccomp programs, and the two-uid user namespace (sandbox_userns.hpp;
// -1: bwrap makes a namespace of one uid). Pure. System paths that are symlinks on the host
// (/lib -> usr/lib on merged-usr systems) become --symlink.
std::vector<std::string> bwrap_arguments(const SandboxSpec& spec, int base_fd, int zygote_fd,
                                         int candidate_fd, int userns_fd = -1);

// The highest ancestor of `path` (or `path` itself) that a uid which is neither its owner nor
// in its group cannot search (no o+x), or "" when every component is searchable. Only stat().
std::string first_unsearchable_ancestor(const std::string& path);

// Root only: in a new private mount namespace, covers each directory that uid kSandboxUid
// cannot search on the way to `paths` with a 0755 tmpfs and binds the path back at its own
// location, so that the same absolute paths (a venv's interpreter symlink into /root/.pyenv,
// say) resolve for the unprivileged sandbox. Changes nothing outside this process's mount
// namespace. Returns "" on success, else the error.
std::string stage_for_unprivileged(const std::vector<std::string>& paths);

// setgroups({}), setresgid, setresuid to kSandboxGid/kSandboxUid; marks the process dumpable
// again (bwrap reads /proc/self). Returns "" on success.
std::string drop_to_sandbox_user();

// Applies `limits` with setrlimit (only ever lowering). Returns "" on success.
std::string apply_limits(const SandboxLimits& limits);

}  // namespace palladium::agent

#endif  // PALLADIUM_SANDBOX_CANDIDATE_SANDBOX_HPP_
