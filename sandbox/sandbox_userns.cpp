#include "sandbox/sandbox_userns.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/candidate_sandbox.hpp"

namespace palladium::agent {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno_text("open " + path);
  ssize_t n = ::write(fd, text.data(), text.size());
  std::string err = n == static_cast<ssize_t>(text.size()) ? "" : errno_text("write " + path);
  ::close(fd);
  return err;
}

// The forked helper: reports one byte ('k' when the namespace is made; on failure it prints
// why), then waits until the launcher has written the maps and opened the namespace.
[[noreturn]] void helper(int report_fd, int go_fd) {
  std::string err = drop_to_sandbox_user();
  if (err.empty() && ::unshare(CLONE_NEWUSER) != 0) err = errno_text("unshare(CLONE_NEWUSER)");
  // The helper owns the new namespace, so it holds CAP_SYS_RESOURCE there and may set that
  // namespace's own limit: nothing inside can make a nested namespace (ENOSPC).
  if (err.empty()) err = write_file("/proc/sys/user/max_user_namespaces", "0");
  if (!err.empty()) {
    std::string line = "palladium-sandbox: user namespace helper: " + err + "\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
  }
  char status = err.empty() ? 'k' : 'x';
  [[maybe_unused]] ssize_t n = ::write(report_fd, &status, 1);
  char go = 0;
  [[maybe_unused]] ssize_t m = ::read(go_fd, &go, 1);  // until the launcher holds the fd
  ::_exit(err.empty() ? 0 : 1);
}

}  // namespace

std::string SandboxIds::describe() const {
  if (userns_fd >= 0) {
    return "split: parent " + std::to_string(kSandboxUid) + ", spares " +
           std::to_string(kSpareUid) + " (uid and gid)";
  }
  return "one uid " + std::to_string(kSandboxUid) + ": " + reason;
}

std::string two_id_map() {
  return std::to_string(kSandboxUid) + " " + std::to_string(kSandboxUid) + " 1\n" +
         std::to_string(kSpareUid) + " " + std::to_string(kSpareUid) + " 1\n";
}

SandboxIds make_sandbox_ids() {
  SandboxIds ids;
  if (::geteuid() != 0) {
    ids.reason = "the launcher is not root, and only root can map a second uid into the "
                 "sandbox's user namespace (bwrap maps one)";
    return ids;
  }
  if (::getpwuid(kSpareUid) != nullptr || ::getgrgid(kSpareGid) != nullptr) {
    ids.reason = "uid or gid " + std::to_string(kSpareUid) +
                 " is a user or group of this host, so spares do not take it";
    return ids;
  }
  int report[2], go[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    ids.error = errno_text("pipe");
    return ids;
  }
  if (::pipe2(go, O_CLOEXEC) != 0) {
    ids.error = errno_text("pipe");
    ::close(report[0]);
    ::close(report[1]);
    return ids;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    ::close(go[1]);
    helper(report[1], go[0]);
  }
  ::close(report[1]);
  ::close(go[0]);
  if (pid < 0) {
    ids.error = errno_text("fork");
  } else {
    char status = 0;
    if (::read(report[0], &status, 1) != 1 || status != 'k') {
      ids.error = "the user namespace helper failed (its message is above)";
    }
    const std::string proc = "/proc/" + std::to_string(pid);
    if (ids.error.empty()) ids.error = write_file(proc + "/uid_map", two_id_map());
    if (ids.error.empty()) ids.error = write_file(proc + "/gid_map", two_id_map());
    if (ids.error.empty()) {
      ids.userns_fd = ::open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
      if (ids.userns_fd < 0) ids.error = errno_text("open " + proc + "/ns/user");
    }
    if (!ids.error.empty()) ::kill(pid, SIGKILL);
    ::close(go[1]);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(report[0]);
  if (pid < 0) ::close(go[1]);
  if (!ids.error.empty() && ids.userns_fd >= 0) {
    ::close(ids.userns_fd);
    ids.userns_fd = -1;
  }
  return ids;
}

}  // namespace palladium::agent
