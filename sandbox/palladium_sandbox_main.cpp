// palladium-sandbox: starts one candidate sandbox (sandbox/candidate_sandbox.hpp) and execs
// bubblewrap in it. Run by the judge (judge/candidate_pool.py); not a user command.
//
//   palladium-sandbox [--ro PATH]... [--env NAME=VALUE]... [limits] [--keep-fd N]... -- CMD...
//
// Exit status: 2 for bad arguments, 3 when the sandbox cannot be prepared (the message says
// why on stderr); otherwise bwrap's, which is the command's.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sandbox/candidate_sandbox.hpp"
#include "sandbox/sandbox_userns.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace {

using namespace palladium::agent;

constexpr const char* kBwrap = "/usr/bin/bwrap";

int fail(int status, const std::string& message) {
  std::fprintf(stderr, "palladium-sandbox: %s\n", message.c_str());
  return status;
}

// An inheritable memfd holding `data`, positioned at 0 (bwrap reads it once).
int data_fd(const std::string& name, const std::string& data) {
  int fd = ::memfd_create(name.c_str(), 0);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  SandboxSpec spec;
  if (std::string err = parse_sandbox_args(args, &spec); !err.empty()) return fail(2, err);

  // The cgroup first (as root; a non-root launcher mostly cannot, and says so): the runner is
  // told where it is, the judge logs it, and a sandbox without one is never silent about it.
  CgroupPlacement cgroup = enter_sandbox_cgroup(spec.cgroup);
  std::string cgroup_state = cgroup.describe(spec.cgroup);
  if (cgroup.version.empty()) {
    std::fprintf(stderr,
                 "palladium-sandbox: WARNING: no memory/pids cgroup for this sandbox (%s); it has "
                 "RLIMIT_NPROC %lld per host uid and RLIMIT_AS per process only\n",
                 cgroup.reason.c_str(), static_cast<long long>(spec.limits.processes));
  }
  spec.env.push_back("PALLADIUM_SANDBOX_CGROUP_STATE=" + cgroup_state);

  // The parent's and the spares' uids, before the launcher drops root (it writes the maps).
  SandboxIds ids = make_sandbox_ids();
  // A host that refuses the namespace (a container without CAP_SETUID over both uids) keeps
  // one uid, loudly, as a host without cgroups keeps rlimits: the judge still works and says so.
  if (!ids.error.empty()) {
    ids.reason = "the launcher is root but could not make the two-uid user namespace: " + ids.error;
  }
  if (ids.userns_fd < 0) {
    std::fprintf(stderr,
                 "palladium-sandbox: WARNING: the warm-spare parent and its spares share one "
                 "uid (%s); the kernel's uid checks do not separate them, seccomp alone does\n",
                 ids.reason.c_str());
  } else {
    spec.env.push_back("PALLADIUM_SPARE_ID=" + std::to_string(kSpareUid));
  }
  spec.env.push_back("PALLADIUM_SANDBOX_IDS=" + ids.describe());

  int fds[3];
  const SeccompStage stages[3] = {SeccompStage::kBase, SeccompStage::kZygote,
                                  SeccompStage::kCandidate};
  for (int i = 0; i < 3; ++i) {
    SeccompProgram program = build_seccomp_program(stages[i]);
    if (!program.error.empty()) return fail(3, program.error);
    fds[i] = data_fd("palladium-seccomp-" + std::string(to_string(stages[i])), program.bpf);
    if (fds[i] < 0) return fail(3, std::string("memfd for seccomp: ") + std::strerror(errno));
  }
  std::vector<std::string> bwrap_args = bwrap_arguments(spec, fds[0], fds[1], fds[2],
                                                        ids.userns_fd);
  if (spec.print_only) {
    for (const std::string& a : bwrap_args) std::printf("%s\n", a.c_str());
    return 0;
  }

  // Only what the command must inherit reaches bwrap: stdio, the kept fds, the programs.
  std::set<int> keep(spec.keep_fds.begin(), spec.keep_fds.end());
  keep.insert(fds, fds + 3);
  if (ids.userns_fd >= 0) keep.insert(ids.userns_fd);
  for (int fd = 3; fd < 4096; ++fd) {
    if (!keep.count(fd)) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  for (int fd : keep) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) return fail(3, "--keep-fd " + std::to_string(fd) + " is not open");
    ::fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  // With a pids cgroup, RLIMIT_NPROC is left as inherited: it counts every sandbox of the same
  // host uid together, so one candidate holding threads starved the others, while the cgroup
  // bounds this sandbox alone. (Raising it is not possible: hosts drop CAP_SYS_RESOURCE.)
  if (!cgroup.version.empty()) spec.limits.processes = -1;
  if (std::string err = apply_limits(spec.limits); !err.empty()) return fail(3, err);
  if (::geteuid() == 0) {
    std::vector<std::string> paths;
    for (const auto& [src, dest] : spec.read_only) paths.push_back(src);
    if (std::string err = stage_for_unprivileged(paths); !err.empty()) return fail(3, err);
    if (std::string err = drop_to_sandbox_user(); !err.empty()) return fail(3, err);
  }
  if (::chdir("/") != 0) return fail(3, std::string("chdir /: ") + std::strerror(errno));

  std::vector<char*> cargv;
  cargv.push_back(const_cast<char*>(kBwrap));
  for (std::string& a : bwrap_args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  char* empty_env[] = {nullptr};  // bwrap's own environment; the sandbox gets --setenv only
  ::execve(kBwrap, cargv.data(), empty_env);
  return fail(3, std::string("exec ") + kBwrap + ": " + std::strerror(errno) +
                     " (install bubblewrap: scripts/setup.sh)");
}
