#include "sandbox/seccomp_policy.hpp"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include <seccomp.h>

namespace palladium::agent {

namespace {

// Refused in every stage: what lets a process reach outside its namespaces, inspect or
// modify another process, or change the host. None of it is needed to import, trace, lower,
// export or interpret a Pallas kernel.
const char* const kBaseRefused[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
    "pidfd_getfd", "mount", "umount2", "pivot_root", "chroot", "setns", "unshare",
    "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
    "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf",
    "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "acct", "quotactl",
    "quotactl_fd", "iopl", "ioperm", "lookup_dcookie", "syslog", "vhangup", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init", "uselib",
    "nfsservctl", "move_pages", "migrate_pages", "memfd_secret",
};

const char* const kZygoteRefused[] = {"execve", "execveat"};

// SysV and POSIX IPC objects live in the sandbox's IPC namespace, which outlives a spare: one
// candidate's segment (its memory, its data) would reach the next. None is needed by JAX.
const char* const kCandidateRefused[] = {
    "fork", "vfork", "socket", "socketpair", "tkill", "pidfd_send_signal", "pidfd_open",
    "shmget", "msgget", "semget", "mq_open",
};

// Signals only to the process itself (abort(), raise() and a CHECK failure in XLA are a crash of
// the candidate, not an attack): the first argument must be the caller's own pid, which the
// spare writes over kSelfPidPlaceholder when it loads the program.
const char* const kSelfOnlySignals[] = {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"};

// Scheduling, priority and affinity calls whose first argument is a pid (0 = the calling thread).
// A candidate may tune itself; on any other pid (its warm-spare parent, whose state every later
// spare inherits, or a neighbour) the call fails with EPERM.
const char* const kSelfOnlyScheduling[] = {"sched_setscheduler", "sched_setparam",
                                           "sched_setaffinity", "sched_setattr"};

// ioprio_set's IOPRIO_WHO_PROCESS (linux/ioprio.h; glibc has no header for it).
constexpr uint64_t kIoprioWhoProcess = 1;

constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
                                        CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};

struct ContextDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

std::string rc_text(const char* what, int rc) {
  return std::string(what) + ": " + std::strerror(-rc);
}

// Adds `action` for `name` (with optional argument conditions). A name the running kernel's
// architecture does not have (libseccomp resolves it to a negative number) is skipped: there
// is nothing to refuse.
std::string add(scmp_filter_ctx ctx, uint32_t action, const char* name,
                std::initializer_list<scmp_arg_cmp> conditions = {}) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR || nr < 0) return "";
  int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(conditions.size()),
                                  conditions.size() ? conditions.begin() : nullptr);
  return rc == 0 ? "" : rc_text((std::string("seccomp_rule_add ") + name).c_str(), rc);
}

std::string add_base_rules(scmp_filter_ctx ctx) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kBaseRefused) {
    if (auto err = add(ctx, eperm, name); !err.empty()) return err;
  }
  // clone3 passes its flags in memory, which a filter cannot read: make glibc fall back to
  // clone, whose flags are in a register.
  if (auto err = add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3"); !err.empty()) return err;
  for (uint64_t flag : kNamespaceFlags) {
    if (auto err = add(ctx, eperm, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
        !err.empty()) {
      return err;
    }
  }
  for (const char* name : {"socket", "socketpair"}) {
    if (auto err = add(ctx, eperm, name, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)}); !err.empty()) {
      return err;
    }
  }
  // Typing into the controlling terminal of someone else (bwrap's --new-session also stops it).
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI),
                                static_cast<unsigned long>(TIOCLINUX)}) {
    if (auto err = add(ctx, eperm, "ioctl", {SCMP_A1(SCMP_CMP_EQ, request)}); !err.empty()) {
      return err;
    }
  }
  return "";
}

// Nice, scheduling policy, affinity and I/O priority of the caller only. Measured on the old
// sandbox: a candidate that reniced its warm-spare parent, set it SCHED_IDLE or pinned it to one
// CPU made the next honest candidates, which inherit that state, time out. EPERM rather than
// SIGSYS: a library may tune its own threads by tid (pthread_setaffinity_np), which is harmless,
// and a refused call changes nothing whoever made it. setpriority and ioprio_set take (which,
// who): only (PRIO_PROCESS / IOPRIO_WHO_PROCESS, 0) names the caller alone; a process group or
// a uid (PRIO_PGRP, PRIO_USER with who 0) includes the parent.
std::string add_self_only_scheduling_rules(scmp_filter_ctx ctx) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kSelfOnlyScheduling) {
    if (auto err = add(ctx, eperm, name, {SCMP_A0(SCMP_CMP_NE, 0)}); !err.empty()) return err;
  }
  for (auto [name, process] : {std::pair<const char*, uint64_t>{"setpriority", PRIO_PROCESS},
                               {"ioprio_set", kIoprioWhoProcess}}) {
    if (auto err = add(ctx, eperm, name, {SCMP_A0(SCMP_CMP_NE, process)}); !err.empty()) {
      return err;
    }
    if (auto err = add(ctx, eperm, name, {SCMP_A1(SCMP_CMP_NE, 0)}); !err.empty()) return err;
  }
  return "";
}

// In a candidate process a refused call is an attack, not a probe: the process is killed
// (SIGSYS), so a candidate that catches an EPERM cannot carry on and pass. The earlier stages'
// refusals are repeated here with that action (the strictest action of stacked filters wins).
std::string add_candidate_rules(scmp_filter_ctx ctx) {
  const uint32_t kill = SCMP_ACT_KILL_PROCESS;
  for (const char* name : kBaseRefused) {
    if (auto err = add(ctx, kill, name); !err.empty()) return err;
  }
  for (const char* name : kZygoteRefused) {
    if (auto err = add(ctx, kill, name); !err.empty()) return err;
  }
  for (const char* name : kCandidateRefused) {
    if (auto err = add(ctx, kill, name); !err.empty()) return err;
  }
  for (const char* name : kSelfOnlySignals) {
    if (auto err = add(ctx, kill, name, {SCMP_A0(SCMP_CMP_NE, kSelfPidPlaceholder)});
        !err.empty()) {
      return err;
    }
  }
  // Threads only: a clone without CLONE_THREAD is a new process (namespace flags with it are
  // refused by the base stage already).
  if (auto err = add(ctx, kill, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
      !err.empty()) {
    return err;
  }
  // Limits of its own process only (0 = the caller); not the parent's or a spare's.
  if (auto err = add(ctx, kill, "prlimit64", {SCMP_A0(SCMP_CMP_NE, 0)}); !err.empty()) {
    return err;
  }
  return add_self_only_scheduling_rules(ctx);
}

std::string export_program(scmp_filter_ctx ctx, std::string* out) {
  int fd = ::memfd_create("palladium-seccomp", MFD_CLOEXEC);
  if (fd < 0) return std::string("memfd_create: ") + std::strerror(errno);
  int rc = seccomp_export_bpf(ctx, fd);
  if (rc != 0) {
    ::close(fd);
    return rc_text("seccomp_export_bpf", rc);
  }
  off_t size = ::lseek(fd, 0, SEEK_END);
  out->assign(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  ssize_t got = size > 0 ? ::pread(fd, out->data(), out->size(), 0) : 0;
  ::close(fd);
  if (got != static_cast<ssize_t>(out->size())) return "short read of the exported program";
  return "";
}

}  // namespace

std::string_view to_string(SeccompStage stage) {
  switch (stage) {
    case SeccompStage::kBase:
      return "base";
    case SeccompStage::kZygote:
      return "zygote";
    case SeccompStage::kCandidate:
      return "candidate";
  }
  return "?";
}

SeccompProgram build_seccomp_program(SeccompStage stage) {
  SeccompProgram program;
  Context ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) {
    program.error = "seccomp_init failed";
    return program;
  }
  std::string err;
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    err = rc_text("seccomp_attr_set(ACT_BADARCH)", rc);
  }
  if (err.empty()) {
    switch (stage) {
      case SeccompStage::kBase:
        err = add_base_rules(ctx.get());
        break;
      case SeccompStage::kZygote:
        for (const char* name : kZygoteRefused) {
          err = add(ctx.get(), SCMP_ACT_ERRNO(EPERM), name);
          if (!err.empty()) break;
        }
        break;
      case SeccompStage::kCandidate:
        err = add_candidate_rules(ctx.get());
        break;
    }
  }
  if (err.empty()) err = export_program(ctx.get(), &program.bpf);
  if (!err.empty()) {
    program.bpf.clear();
    program.error = "seccomp " + std::string(to_string(stage)) + " filter: " + err;
  }
  return program;
}

std::vector<std::string> refused_syscalls(SeccompStage stage) {
  std::vector<std::string> names;
  auto append = [&](const auto& list) {
    for (const char* name : list) names.emplace_back(name);
  };
  switch (stage) {
    case SeccompStage::kBase:
      append(kBaseRefused);
      break;
    case SeccompStage::kZygote:
      append(kZygoteRefused);
      break;
    case SeccompStage::kCandidate:
      append(kCandidateRefused);
      break;
  }
  return names;
}

}  // namespace palladium::agent
