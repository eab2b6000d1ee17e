// A memory and a pids cgroup of one candidate sandbox (docs/verification.md "The candidate
// sandbox", cgroups). palladium-sandbox enters it before it drops its privileges and execs
// bubblewrap, so the warm-spare parent and every spare count against it, and bwrap's cgroup
// namespace shows the sandbox its own cgroup as the root (its files stay root's).
//
// Why: RLIMIT_NPROC counts every process and thread of a host uid, across all sandboxes (and,
// when the agent is not root, the agent and its judges too): one candidate holding threads made
// other sandboxes' candidates fail to start theirs. RLIMIT_AS bounds one process's virtual
// memory, not a sandbox's resident memory nor its tmpfs pages. A cgroup bounds each sandbox on
// its own.
//
// Where: cgroup v2 first. Its controllers are enabled only from a parent with no processes of its
// own, so the sandbox cgroups go under a delegated directory: `parent` (--cgroup-parent, default
// $PALLADIUM_SANDBOX_CGROUP), else the launcher's own v2 cgroup when memory and pids are
// enabled in its cgroup.subtree_control. Otherwise cgroup v1 hierarchies of the memory and pids
// controllers (a hybrid host such as this project's CI VM), under the launcher's own cgroup in
// each. When neither works (not root and nothing delegated, controllers absent) the result says
// why; the launcher prints it and tells the runner, the judge logs it, and the sandbox keeps
// RLIMIT_NPROC and RLIMIT_AS only. Never silent.
//
// Each cgroup is named palladium-sandbox-<launcher pid>. It cannot remove itself (the launcher
// execs bwrap), so each launch first removes the empty palladium-sandbox-* siblings it finds
// (rmdir fails on a cgroup that still has processes, so a live sandbox's is never touched).
//
// Thread safety: not thread-safe (writes this process's cgroup membership); the launcher is
// single-threaded.

#ifndef PALLADIUM_SANDBOX_SANDBOX_CGROUP_HPP_
#define PALLADIUM_SANDBOX_SANDBOX_CGROUP_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace palladium::agent {

struct CgroupLimits {
  int64_t memory_mb = 6144;  // resident memory + page cache + tmpfs pages of the whole sandbox
  int64_t pids = 1024;       // processes and threads of the whole sandbox
  std::string parent;        // a delegated v2 directory; "" = $PALLADIUM_SANDBOX_CGROUP or own
};

struct CgroupPlacement {
  std::string version;               // "v2", "v1" or "" (none)
  std::vector<std::string> dirs;     // the cgroup directories this process now belongs to
  std::string reason;                // when version is "": why not, in one sentence
  // One line for the runner's environment and the judge's log:
  //   "v2 /sys/fs/cgroup/x/palladium-sandbox-12 memory=6144MiB pids=1024"
  //   "none: <reason>"
  std::string describe(const CgroupLimits& limits) const;
};

// Creates the sandbox's cgroup(s), writes the limits, and moves the calling process in.
CgroupPlacement enter_sandbox_cgroup(const CgroupLimits& limits);

}  // namespace palladium::agent

#endif  // PALLADIUM_SANDBOX_SANDBOX_CGROUP_HPP_
