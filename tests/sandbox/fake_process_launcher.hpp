// A sandbox::ProcessLauncher for tests: it records each LaunchSpec, keeps its own copies of the
// spec's fds (so the test plays the child on them: fd 3 + i is fds[i]), and starts a stand-in
// child that only waits to be killed (its own process group, no fd of the test's), so that the
// caller's kill and reap work as with a real one. Or it fails, when told to.

#ifndef PALLADIUM_TESTS_SANDBOX_FAKE_PROCESS_LAUNCHER_HPP_
#define PALLADIUM_TESTS_SANDBOX_FAKE_PROCESS_LAUNCHER_HPP_

#include <fcntl.h>
#include <errno.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sandbox/process_launcher.hpp"

namespace palladium::sandbox::testing {

class FakeProcessLauncher final : public ProcessLauncher {
 public:
  ~FakeProcessLauncher() override {
    for (const auto& fds : child_fds) {
      for (int fd : fds) {
        if (fd >= 0) ::close(fd);
      }
    }
  }

  // Closes the test's copy of launch `launch`'s fd 3 + `index`, as a child closing its end.
  void close_child_fd(std::size_t launch, std::size_t index) {
    int& fd = child_fds.at(launch).at(index);
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  pid_t launch(const LaunchSpec& spec, std::string* error) override {
    if (!fail_with.empty()) {
      *error = fail_with;
      return -1;
    }
    launched.push_back(spec);
    std::vector<int> fds;
    for (int fd : spec.fds) fds.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    child_fds.push_back(fds);
    // The stand-in says when it has closed every fd of the test's, so that a test that closes
    // its own copy of a pipe end next sees EOF, not a race with the stand-in.
    int sync[2];
    if (::pipe2(sync, O_CLOEXEC) != 0) {
      *error = "pipe2 failed";
      return -1;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      for (int fd = 3; fd < 4096; ++fd) {
        if (fd != sync[1]) ::close(fd);
      }
      char ok = 1;
      [[maybe_unused]] ssize_t n = ::write(sync[1], &ok, 1);
      ::close(sync[1]);
      for (;;) ::pause();
    }
    ::close(sync[1]);
    if (pid > 0) {
      ::setpgid(pid, pid);  // also here: no race with the caller's group kill
      char ok = 0;
      while (::read(sync[0], &ok, 1) < 0 && errno == EINTR) {
      }
    }
    ::close(sync[0]);
    if (pid < 0) *error = "fork failed";
    return pid;
  }

  std::vector<LaunchSpec> launched;
  std::vector<std::vector<int>> child_fds;  // per launch: the child's fds 3, 4, ...
  std::string fail_with;                    // launch() fails with this when set
};

}  // namespace palladium::sandbox::testing

#endif  // PALLADIUM_TESTS_SANDBOX_FAKE_PROCESS_LAUNCHER_HPP_
