// The user namespace that lets a sandbox's warm-spare parent and its spares run as different
// uids (docs/verification.md "The candidate sandbox", issue 21 item 5).
//
// Why: a spare of the same uid as its parent may, by the kernel's rules, signal it, read its
// /proc files, renice it or change its limits; seccomp refuses those calls, but a second wall
// that does not depend on a filter list is worth having. bwrap maps one uid only, so when the
// launcher is root it makes the namespace itself and hands it to bwrap with --userns:
//   1. a helper process drops to kSandboxUid first and unshares a user namespace (so that
//      namespace is owned by the uid bwrap later runs as, and bwrap may enter it), and inside
//      it sets user.max_user_namespaces to 0 (no namespace nested in it: what bwrap's
//      --disable-userns does, which bwrap refuses together with --userns);
//   2. the launcher (root) writes the two-line identity maps "65534 65534 1" and
//      "65533 65533 1" for uids and gids alike, and keeps the namespace open as an fd.
// bwrap then runs the parent as kSandboxUid with CAP_SETUID and CAP_SETGID in that namespace
// only (it maps nothing but these two ids, so those capabilities reach nothing else); each
// spare becomes kSpareUid and drops every capability before any candidate code runs
// (sandbox/candidate/identity.py).
//
// Without root nothing can write a two-line map (no newuidmap here): the parent and its spares
// keep one uid, and the result says why (the launcher prints it, the runner's ready frame
// carries it, the judge logs it). Also when kSpareUid or kSpareGid names a user or group of the
// host: a uid someone uses for files must not be a candidate's.
//
// Thread safety: not thread-safe (forks); the launcher is single-threaded.

#ifndef PALLADIUM_SANDBOX_SANDBOX_USERNS_HPP_
#define PALLADIUM_SANDBOX_SANDBOX_USERNS_HPP_

#include <sys/types.h>

#include <string>

namespace palladium::agent {

// The spares' uid and gid, the same number inside the sandbox and on the host (an identity
// map): one below kSandboxUid (nobody), unused on the hosts this runs on.
inline constexpr uid_t kSpareUid = 65533;
inline constexpr gid_t kSpareGid = 65533;

struct SandboxIds {
  int userns_fd = -1;  // the two-uid user namespace for bwrap --userns; -1: bwrap makes one uid
  std::string reason;  // when userns_fd is -1: why the parent and its spares share one uid
  std::string error;   // the launcher is root but the namespace could not be made (one uid)
  // One line for the runner's environment and the judge's log:
  //   "split: parent 65534, spares 65533 (uid and gid)"  or  "one uid 65534: <reason>"
  std::string describe() const;
};

// The uid_map (and gid_map) text of the two-uid namespace.
std::string two_id_map();

// Root: the namespace described above. Not root: one uid, with the reason.
SandboxIds make_sandbox_ids();

}  // namespace palladium::agent

#endif  // PALLADIUM_SANDBOX_SANDBOX_USERNS_HPP_
