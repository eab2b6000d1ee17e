#include "sandbox/process_launcher.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace palladium::sandbox {

namespace {

// execve needs a path: resolve a bare name against this process's PATH, as posix_spawnp did.
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return name;  // execve fails with ENOENT, reported by launch()
}

// Lowers one limit in the child (async-signal-safe: getrlimit/setrlimit are plain syscalls).
// Never raises a limit above the inherited hard limit.
void child_limit(int resource, int64_t soft, int64_t hard_extra = 0) {
  if (soft < 0) return;
  rlimit cur{};
  if (::getrlimit(resource, &cur) != 0) return;
  rlim_t want_soft = static_cast<rlim_t>(soft);
  rlim_t want_hard = static_cast<rlim_t>(soft + hard_extra);
  if (cur.rlim_max != RLIM_INFINITY && want_hard > cur.rlim_max) want_hard = cur.rlim_max;
  if (want_soft > want_hard) want_soft = want_hard;
  rlimit next{want_soft, want_hard};
  ::setrlimit(resource, &next);
}

// Everything the child needs between fork and exec, prepared by the parent.
struct ChildPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int output_fd, err_fd;
  const int* fds;  // the child's 3, 4, ...
  int fd_count;
  ChildLimits limits;
};

[[noreturn]] void child_after_fork(const ChildPlan& p) {
  ::setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGXCPU, SIGXFSZ}) {
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0 && null_fd != 0) {
    ::dup2(null_fd, 0);
    ::close(null_fd);
  }
  // The sources are all >= kFirstSource (launch()), so these cannot clobber each other; dup2
  // clears close-on-exec on the targets.
  ::dup2(p.output_fd, 1);
  ::dup2(p.output_fd, 2);
  for (int i = 0; i < p.fd_count; ++i) ::dup2(p.fds[i], 3 + i);
  // Nothing else of the parent's (ZeroMQ sockets, other children's pipes) survives the exec.
  unsigned first_other = 3u + static_cast<unsigned>(p.fd_count);
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first_other, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0)
#endif
  {
    for (int fd = static_cast<int>(first_other); fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  int err = 0;
  if (::chdir(p.cwd) != 0) err = errno;
  if (err == 0 && p.limits.new_network_namespace && ::geteuid() == 0) {
    ::unshare(CLONE_NEWNET);  // best effort: a container may forbid it; the audit hook remains
  }
  child_limit(RLIMIT_CORE, 0);
  child_limit(RLIMIT_AS, p.limits.address_space_bytes);
  child_limit(RLIMIT_CPU, p.limits.cpu_seconds, 30);
  child_limit(RLIMIT_FSIZE, p.limits.file_size_bytes);
  child_limit(RLIMIT_NOFILE, p.limits.open_files);
  if (err == 0) {
    ::execve(p.path, p.argv, p.envp);
    err = errno;
  }
  ssize_t ignored = ::write(p.err_fd, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

// Sources of the child's dup2s live at or above this, above every target (0..2 and the
// spec's 3 + n), so that no dup2 in the child clobbers a source it still needs.
constexpr int kFirstSource = 64;

}  // namespace

pid_t SandboxedLauncher::launch(const LaunchSpec& spec, std::string* error) {
  if (3 + static_cast<int>(spec.fds.size()) > kFirstSource) {
    *error = "too many fds for the child (" + std::to_string(spec.fds.size()) + ")";
    return -1;
  }
  std::vector<int> sources;  // close-on-exec copies, closed below
  auto close_sources = [&] {
    for (int fd : sources) ::close(fd);
  };
  auto copy_high = [&](int fd) {
    int high = ::fcntl(fd, F_DUPFD_CLOEXEC, kFirstSource);
    if (high >= 0) sources.push_back(high);
    return high;
  };
  int output = copy_high(spec.output_fd);
  std::vector<int> fds;
  for (int fd : spec.fds) fds.push_back(copy_high(fd));
  // exec failures come back through this close-on-exec pipe (EOF = exec succeeded).
  int errp[2] = {-1, -1};
  int err_w = -1;
  if (::pipe2(errp, O_CLOEXEC) == 0) {
    err_w = copy_high(errp[1]);
    ::close(errp[1]);
  }
  if (output < 0 || err_w < 0 || std::find(fds.begin(), fds.end(), -1) != fds.end()) {
    *error = std::string("preparing the child's fds: ") + std::strerror(errno);
    if (errp[0] >= 0) ::close(errp[0]);
    close_sources();
    return -1;
  }

  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = spec.env;
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string path = resolve_executable(spec.executable);

  ChildPlan plan{path.c_str(), argv.data(), envp.data(), spec.cwd.c_str(), output, err_w,
                 fds.data(),   static_cast<int>(fds.size()), spec.limits};
  pid_t pid = ::fork();
  if (pid == 0) child_after_fork(plan);
  int fork_errno = errno;
  close_sources();
  if (pid < 0) {
    ::close(errp[0]);
    *error = std::string("fork: ") + std::strerror(fork_errno);
    return -1;
  }
  // Either exec succeeded (EOF) or the child reports its errno and exits 127.
  int child_errno = 0;
  ssize_t got;
  do {
    got = ::read(errp[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  ::close(errp[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *error = std::strerror(child_errno);
    return -1;
  }
  return pid;
}

}  // namespace palladium::sandbox
