// sandbox/process_launcher: the SandboxedLauncher starts a real child with exactly the
// environment, fds and limits it was given.

#include "sandbox/process_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace palladium::sandbox {
namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

int wait_exit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

TEST(SandboxedLauncherTest, TheChildGetsItsEnvironmentFdsCwdAndLimitsAndNothingElse) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  int stray = ::open("/dev/null", O_RDONLY);  // not close-on-exec: the launcher must close it
  ASSERT_EQ(::dup2(stray, 200), 200);
  LaunchSpec spec;
  spec.executable = "sh";  // a bare name, looked up on PATH
  spec.argv = {"sh", "-c",
               "echo \"$FOO|$HOME|$(pwd)|$(ulimit -n)|$(ulimit -c)\" >&3; ls /proc/$$/fd >&3"};
  spec.env = {"FOO=bar", "PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  spec.output_fd = out;
  spec.fds = {pipe_fds[1]};
  spec.limits.open_files = 77;
  std::string error;
  pid_t pid = SandboxedLauncher().launch(spec, &error);
  ::close(pipe_fds[1]);
  ::close(out);
  ::close(stray);
  ::close(200);
  ASSERT_GT(pid, 0) << error;
  std::string got = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_EQ(got.substr(0, got.find('\n')), "bar||/|77|0");  // no HOME: only what was given
  std::string fds = " " + got.substr(got.find('\n') + 1);
  for (char& c : fds) c = c == '\n' ? ' ' : c;
  for (const char* fd : {" 0 ", " 1 ", " 2 ", " 3 "}) EXPECT_NE(fds.find(fd), std::string::npos) << fds;
  EXPECT_EQ(fds.find(" 200 "), std::string::npos) << fds;
}

TEST(SandboxedLauncherTest, AnExecFailureIsReportedWithItsErrnoAndLeavesNoChild) {
  LaunchSpec spec;
  spec.executable = "/nonexistent/judge";
  spec.argv = {"judge"};
  spec.cwd = "/";
  spec.output_fd = STDERR_FILENO;
  std::string error;
  EXPECT_EQ(SandboxedLauncher().launch(spec, &error), -1);
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);  // reaped already
}

TEST(SandboxedLauncherTest, TheChildLeadsItsOwnProcessGroup) {
  LaunchSpec spec;
  spec.executable = "/bin/sleep";
  spec.argv = {"sleep", "30"};
  spec.cwd = "/";
  spec.output_fd = STDERR_FILENO;
  std::string error;
  pid_t pid = SandboxedLauncher().launch(spec, &error);
  ASSERT_GT(pid, 0) << error;
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_NE(::getpgid(pid), ::getpgid(0));
  ::kill(-pid, SIGKILL);
  int status = wait_exit(pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace
}  // namespace palladium::sandbox
