#include "sandbox/seccomp_policy.hpp"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <algorithm>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

namespace palladium::agent {
namespace {

// Loads `program` into the calling process (as the candidate runner does, with TSYNC), writing
// the caller's pid over the placeholder. Returns 0 or errno.
int load(std::string program) {
  for (std::size_t i = 0; i + 8 <= program.size(); i += 8) {
    uint32_t k;
    std::memcpy(&k, program.data() + i + 4, 4);
    if (k == kSelfPidPlaceholder) {
      k = static_cast<uint32_t>(::getpid());
      std::memcpy(program.data() + i + 4, &k, 4);
    }
  }
  sock_fprog prog{static_cast<unsigned short>(program.size() / 8),
                  reinterpret_cast<sock_filter*>(program.data())};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    return errno;
  }
  return 0;
}

// Runs `body` in a child under the given stages; returns the child's wait status. The body's
// return value is the child's exit status.
int in_child(std::initializer_list<SeccompStage> stages, const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (SeccompStage stage : stages) {
      SeccompProgram p = build_seccomp_program(stage);
      if (!p.error.empty() || load(p.bpf) != 0) ::_exit(99);
    }
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status); }

TEST(SeccompPolicyTest, EveryStageBuilds) {
  for (SeccompStage stage : {SeccompStage::kBase, SeccompStage::kZygote, SeccompStage::kCandidate}) {
    SeccompProgram p = build_seccomp_program(stage);
    EXPECT_EQ(p.error, "") << to_string(stage);
    EXPECT_GT(p.bpf.size(), 8u);
    EXPECT_EQ(p.bpf.size() % 8, 0u);
  }
  std::string candidate = build_seccomp_program(SeccompStage::kCandidate).bpf;
  EXPECT_NE(candidate.find(std::string(reinterpret_cast<const char*>(&kSelfPidPlaceholder), 4)),
            std::string::npos);
}

TEST(SeccompPolicyTest, BaseRefusesInetSocketsPtraceAndNamespacesButNotUnixSockets) {
  int status = in_child({SeccompStage::kBase}, [] {
    if (::socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM) return 1;
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return 2;
    ::close(fd);
    if (::syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == 0 || errno != EPERM) return 3;
    if (::unshare(CLONE_NEWUSER) == 0 || errno != EPERM) return 4;
    if (::syscall(SYS_clone3, nullptr, 0) == 0 || errno != ENOSYS) return 5;
    return 0;
  });
  EXPECT_EQ(exit_code(status), 0);
}

TEST(SeccompPolicyTest, ZygoteRefusesExecButMayFork) {
  int status = in_child({SeccompStage::kBase, SeccompStage::kZygote}, [] {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    if (::execv("/bin/true", argv) == 0 || errno != EPERM) return 1;
    pid_t child = ::fork();
    if (child == 0) ::_exit(7);
    int st = 0;
    ::waitpid(child, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 2;
  });
  EXPECT_EQ(exit_code(status), 0);
}

TEST(SeccompPolicyTest, CandidateIsKilledForForkSocketOrSignallingAnother) {
  const SeccompStage all[] = {SeccompStage::kBase, SeccompStage::kZygote, SeccompStage::kCandidate};
  auto run = [&](const std::function<int()>& body) {
    return in_child({all[0], all[1], all[2]}, body);
  };
  int fork_status = run([] { return ::fork() >= 0 ? 1 : 2; });
  EXPECT_TRUE(WIFSIGNALED(fork_status) && WTERMSIG(fork_status) == SIGSYS) << fork_status;
  int socket_status = run([] { return ::socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? 1 : 2; });
  EXPECT_TRUE(WIFSIGNALED(socket_status) && WTERMSIG(socket_status) == SIGSYS);
  // An IPC object would outlive the spare in the sandbox's IPC namespace.
  int shm_status =
      run([] { return ::syscall(SYS_shmget, 0 /* IPC_PRIVATE */, 4096, 01600) >= 0 ? 1 : 2; });
  EXPECT_TRUE(WIFSIGNALED(shm_status) && WTERMSIG(shm_status) == SIGSYS) << shm_status;
  int kill_status = run([] { return ::kill(::getppid(), 0) == 0 ? 1 : 2; });
  EXPECT_TRUE(WIFSIGNALED(kill_status) && WTERMSIG(kill_status) == SIGSYS);
  // A signal to itself is a crash of its own, not an attack.
  int self_status = run([] {
    ::raise(SIGSEGV);
    return 3;
  });
  EXPECT_TRUE(WIFSIGNALED(self_status) && WTERMSIG(self_status) == SIGSEGV) << self_status;
  // Threads are fine.
  int thread_status = run([] {
    bool ran = false;
    std::thread t([&] { ran = true; });
    t.join();
    return ran && ::kill(::getpid(), 0) == 0 ? 0 : 4;
  });
  EXPECT_EQ(exit_code(thread_status), 0);
}

// Measured on the old sandbox: a candidate reniced, rescheduled or pinned its warm-spare parent,
// and the next honest candidates, forked from it, timed out. Each call is tried on the parent
// (its pid, or a group or uid that includes it) and must fail with EPERM and change nothing;
// the same call on the caller itself must work.
TEST(SeccompPolicyTest, CandidateMayTuneOnlyItself) {
  const pid_t parent = ::getpid();
  const int parent_nice = ::getpriority(PRIO_PROCESS, 0);
  cpu_set_t parent_cpus;
  CPU_ZERO(&parent_cpus);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(parent_cpus), &parent_cpus), 0);
  const long parent_ioprio = ::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
  int status = in_child({SeccompStage::kBase, SeccompStage::kZygote, SeccompStage::kCandidate},
                        [parent] {
    auto refused = [](long rc) { return rc == -1 && errno == EPERM; };
    // Its own process group, and a uid with no process: were the filter missing, these calls
    // would succeed (or fail with ESRCH) without touching anything beyond this child.
    if (::setpgid(0, 0) != 0) return 20;
    if (!refused(::setpriority(PRIO_PROCESS, static_cast<id_t>(parent), 19))) return 1;
    if (!refused(::setpriority(PRIO_PGRP, 0, 19))) return 2;
    if (!refused(::setpriority(PRIO_USER, 54321, 19))) return 3;
    sched_param param{};
    if (!refused(::sched_setscheduler(parent, SCHED_IDLE, &param))) return 4;
    if (!refused(::sched_setparam(parent, &param))) return 5;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (!refused(::sched_setaffinity(parent, sizeof(one), &one))) return 6;
    const long idle_class = 3L << 13;  // IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT
    if (!refused(::syscall(SYS_ioprio_set, 1, parent, idle_class))) return 7;
    if (!refused(::syscall(SYS_ioprio_set, 2 /* IOPRIO_WHO_PGRP */, 0, idle_class))) return 8;
    // Itself: allowed.
    if (::setpriority(PRIO_PROCESS, 0, 5) != 0) return 10;
    if (::sched_setaffinity(0, sizeof(one), &one) != 0) return 11;
    if (::sched_setscheduler(0, SCHED_BATCH, &param) != 0) return 12;
    if (::syscall(SYS_ioprio_set, 1, 0, idle_class) != 0) return 13;
    return 0;
  });
  EXPECT_EQ(exit_code(status), 0);
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), parent_nice);
  EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER);
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &parent_cpus));
  EXPECT_EQ(::syscall(SYS_ioprio_get, 1, 0), parent_ioprio);
}

TEST(SeccompPolicyTest, RefusedNamesAreListed) {
  auto base = refused_syscalls(SeccompStage::kBase);
  EXPECT_NE(std::find(base.begin(), base.end(), "ptrace"), base.end());
  auto zygote = refused_syscalls(SeccompStage::kZygote);
  EXPECT_NE(std::find(zygote.begin(), zygote.end(), "execve"), zygote.end());
}

}  // namespace
}  // namespace palladium::agent
