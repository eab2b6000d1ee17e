// The seccomp filters of the candidate sandbox (docs/verification.md "The candidate sandbox"),
// built with libseccomp and exported as classic BPF programs.
//
// Three stages, each loaded on top of the previous ones (seccomp filters stack; the strictest
// answer wins, and a loaded filter can never be removed):
//   kBase       loaded by bubblewrap (--seccomp) just before it execs the candidate runner:
//               no ptrace or process_vm_*, no mount/namespace/keyring/bpf/perf/io_uring/
//               module/clock syscalls, no namespace flags in clone, clone3 answers ENOSYS (so
//               glibc falls back to clone, whose flags a filter can read), sockets only of
//               family AF_UNIX, no TIOCSTI.
//   kZygote     loaded by the warm-spare parent (sandbox/candidate/) before it imports JAX:
//               adds no execve/execveat. The parent may still fork its spares.
//   kCandidate  loaded by each forked spare as its first act, while it is still single-
//               threaded (so every thread JAX starts later inherits it): adds no fork, vfork or
//               clone without CLONE_THREAD (threads only), no socket or socketpair at all, no
//               signal to another process (kill, tgkill and sigqueue only with the caller's
//               own pid, which the spare patches in over kSelfPidPlaceholder; no tkill or
//               pidfd_*), prlimit64 only on itself, no SysV/POSIX IPC object (it would outlive
//               the spare); setpriority, ioprio_set and sched_set* only on itself (EPERM
//               otherwise); and every refusal of the earlier stages.
// In the base and zygote stages a refused call fails with EPERM (ENOSYS for clone3, so glibc
// falls back to clone): that code is the runner's own. In the candidate stage a refused call
// kills the process with SIGSYS: candidate code that tries one is attacking, and must not be
// able to catch the error and carry on to a verdict of `correct`. The filter's architecture
// check kills the process on a foreign ABI (x32, i386).
//
// Thread safety: build_seccomp_program is pure and may be called from any thread.

#ifndef PALLADIUM_SANDBOX_SECCOMP_POLICY_HPP_
#define PALLADIUM_SANDBOX_SECCOMP_POLICY_HPP_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace palladium::agent {

enum class SeccompStage { kBase, kZygote, kCandidate };

// A constant no pid reaches (pid_max is at most 2^22) that stands for "the caller's pid" in the
// candidate program; the loader replaces every BPF instruction constant equal to it.
inline constexpr uint32_t kSelfPidPlaceholder = 0x3EC05EC0;

// "base", "zygote", "candidate".
std::string_view to_string(SeccompStage stage);

struct SeccompProgram {
  std::string bpf;    // struct sock_filter[] as the kernel takes it (8 bytes per instruction)
  std::string error;  // non-empty when the program could not be built; bpf is then empty
};

// The program for `stage` (only that stage's rules; load the earlier stages first).
SeccompProgram build_seccomp_program(SeccompStage stage);

// The syscall names `stage` refuses outright (for documentation and tests; conditional rules,
// such as clone without CLONE_THREAD, are not listed).
std::vector<std::string> refused_syscalls(SeccompStage stage);

}  // namespace palladium::agent

#endif  // PALLADIUM_SANDBOX_SECCOMP_POLICY_HPP_
