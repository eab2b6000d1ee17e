#include "sandbox/candidate_sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

namespace palladium::agent {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0') return false;
  *out = v;
  return true;
}

std::string dirname_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

// The components "/a", "/a/b", ... of an absolute normalised path.
std::vector<std::string> prefixes(const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') out.push_back(path.substr(0, i));
  }
  return out;
}

// What bwrap_arguments mounts, binds or links itself.
constexpr std::array<const char*, 8> kSystemDirs = {"/usr", "/lib", "/lib64", "/bin",
                                                    "/sbin", "/tmp", "/proc", "/dev"};

std::string mkdirs(const std::string& path) {
  for (const std::string& p : prefixes(path)) {
    if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return errno_text("mkdir " + p);
  }
  return "";
}

void lower_limit(int resource, int64_t soft, int64_t hard_extra, std::string* err) {
  if (soft < 0 || !err->empty()) return;
  rlimit cur{};
  if (::getrlimit(resource, &cur) != 0) {
    *err = errno_text("getrlimit");
    return;
  }
  rlim_t want_soft = static_cast<rlim_t>(soft);
  rlim_t want_hard = static_cast<rlim_t>(soft + hard_extra);
  if (cur.rlim_max != RLIM_INFINITY && want_hard > cur.rlim_max) want_hard = cur.rlim_max;
  if (want_soft > want_hard) want_soft = want_hard;
  rlimit next{want_soft, want_hard};
  if (::setrlimit(resource, &next) != 0) *err = errno_text("setrlimit");
}

}  // namespace

std::string parse_sandbox_args(const std::vector<std::string>& args, SandboxSpec* spec) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) -> bool {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    auto number = [&](int64_t* out) -> std::string {
      std::string text;
      if (!value(&text)) return a + " needs a value";
      if (!parse_int(text, out)) return a + ": \"" + text + "\" is not an integer";
      return "";
    };
    std::string v, w;
    if (a == "--") {
      spec->command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a == "--ro") {
      if (!value(&v)) return "--ro needs a path";
      spec->read_only.emplace_back(v, v);
    } else if (a == "--ro-at") {
      if (!value(&v) || !value(&w)) return "--ro-at needs SRC and DEST";
      spec->read_only.emplace_back(v, w);
    } else if (a == "--env") {
      if (!value(&v) || v.find('=') == std::string::npos || v[0] == '=') {
        return "--env needs NAME=VALUE";
      }
      spec->env.push_back(v);
    } else if (a == "--chdir") {
      if (!value(&spec->chdir)) return "--chdir needs a directory";
    } else if (a == "--tmpfs-mb") {
      if (auto e = number(&spec->tmpfs_mb); !e.empty()) return e;
    } else if (a == "--as-mb") {
      if (auto e = number(&spec->limits.address_space_mb); !e.empty()) return e;
    } else if (a == "--cpu-s") {
      if (auto e = number(&spec->limits.cpu_seconds); !e.empty()) return e;
    } else if (a == "--fsize-mb") {
      if (auto e = number(&spec->limits.file_size_mb); !e.empty()) return e;
    } else if (a == "--nofile") {
      if (auto e = number(&spec->limits.open_files); !e.empty()) return e;
    } else if (a == "--nproc") {
      if (auto e = number(&spec->limits.processes); !e.empty()) return e;
    } else if (a == "--memory-mb") {
      if (auto e = number(&spec->cgroup.memory_mb); !e.empty()) return e;
    } else if (a == "--pids") {
      if (auto e = number(&spec->cgroup.pids); !e.empty()) return e;
    } else if (a == "--cgroup-parent") {
      if (!value(&spec->cgroup.parent) || spec->cgroup.parent.empty() ||
          spec->cgroup.parent[0] != '/') {
        return "--cgroup-parent needs an absolute directory";
      }
    } else if (a == "--keep-fd") {
      int64_t fd = 0;
      if (auto e = number(&fd); !e.empty()) return e;
      if (fd < 3 || fd > 1023) return "--keep-fd " + std::to_string(fd) + " is not in 3..1023";
      spec->keep_fds.push_back(static_cast<int>(fd));
    } else if (a == "--print-args") {
      spec->print_only = true;
    } else {
      return "unknown argument \"" + a + "\"";
    }
  }
  if (spec->command.empty()) return "no command after --";
  for (const auto& [src, dest] : spec->read_only) {
    if (src.empty() || src[0] != '/' || dest.empty() || dest[0] != '/') {
      return "read-only paths must be absolute (got \"" + src + "\" -> \"" + dest + "\")";
    }
  }
  if (spec->tmpfs_mb < 1) return "--tmpfs-mb must be >= 1";
  if (spec->cgroup.memory_mb < 64) return "--memory-mb must be >= 64";
  if (spec->cgroup.pids < 16) return "--pids must be >= 16";
  return "";
}

std::vector<std::string> bwrap_arguments(const SandboxSpec& spec, int base_fd, int zygote_fd,
                                         int candidate_fd, int userns_fd) {
  std::vector<std::string> a;
  if (userns_fd < 0) {
    a = {"--unshare-all", "--unshare-user", "--disable-userns"};
  } else {
    // The launcher's two-uid namespace (sandbox_userns.hpp), which already refuses nested ones
    // (bwrap's --disable-userns and --unshare-all's user namespace do not go with --userns).
    a = {"--userns", std::to_string(userns_fd), "--unshare-ipc", "--unshare-pid",
         "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"};
  }
  a.insert(a.end(), {"--uid", std::to_string(kSandboxUid), "--gid", std::to_string(kSandboxGid),
                     "--hostname", "candidate", "--die-with-parent", "--new-session",
                     "--cap-drop", "ALL"});
  // Only for the parent's spares to take the other uid (sandbox/candidate/identity.py).
  if (userns_fd >= 0) a.insert(a.end(), {"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  // The parent's /tmp, where spares of the other uid may write their own files but, sticky,
  // never remove or rename the parent's.
  if (userns_fd >= 0) a.insert(a.end(), {"--perms", "1777"});
  a.insert(a.end(), {"--size", std::to_string(spec.tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp"});
  // The directories bwrap would create on the way to a mount point are 0700, which a spare of
  // the other uid cannot search (the interpreter's own, a venv under /root, the runner's
  // package): made 0755 first. The system directories below are mounts or symlinks already.
  std::vector<std::string> dests = {"/etc/ld.so.cache"};
  for (const auto& [src, dest] : spec.read_only) dests.push_back(dest);
  std::set<std::string> ancestors;
  for (const std::string& dest : dests) {
    std::vector<std::string> up = prefixes(dest);
    up.pop_back();  // the mount point itself
    for (const std::string& p : up) {
      bool system = std::any_of(kSystemDirs.begin(), kSystemDirs.end(), [&](const char* d) {
        return p == d || p.rfind(std::string(d) + "/", 0) == 0;
      });
      if (!system) ancestors.insert(p);
    }
  }
  for (const std::string& p : ancestors) a.insert(a.end(), {"--dir", p});
  a.insert(a.end(), {"--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache",
                     "/etc/ld.so.cache"});
  for (const char* dir : {"/lib", "/lib64", "/bin", "/sbin"}) {
    struct stat st {};
    if (::lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(dir, target, sizeof(target) - 1);
      if (n <= 0) continue;
      a.insert(a.end(), {"--symlink", std::string(target, static_cast<std::size_t>(n)), dir});
    } else {
      a.insert(a.end(), {"--ro-bind", dir, dir});
    }
  }
  for (const auto& [src, dest] : spec.read_only) a.insert(a.end(), {"--ro-bind", src, dest});
  const std::string dir = kSeccompDir;
  a.insert(a.end(), {"--dir", dir, "--ro-bind-data", std::to_string(zygote_fd), dir + "/zygote.bpf",
                     // Readable by a spare of the other uid (bwrap makes data files 0600).
                     "--perms", "0444",
                     "--ro-bind-data", std::to_string(candidate_fd), dir + "/candidate.bpf",
                     // The root (a tmpfs holding the mount points bwrap made, e.g. the parent
                     // of the runner's package on PYTHONPATH) read-only: only /tmp is writable,
                     // and nothing on sys.path can be written by one candidate for the next.
                     "--remount-ro", "/",
                     // /dev is a tmpfs of host memory outside /tmp's size; a candidate filled
                     // /dev/shm with 1 GiB that outlived it. Only the device nodes bwrap binds
                     // into it (null, zero, urandom, ...) stay writable.
                     "--remount-ro", "/dev",
                     "--seccomp", std::to_string(base_fd), "--clearenv"});
  for (const std::string& e : spec.env) {
    auto eq = e.find('=');
    a.insert(a.end(), {"--setenv", e.substr(0, eq), e.substr(eq + 1)});
  }
  a.insert(a.end(), {"--chdir", spec.chdir, "--"});
  a.insert(a.end(), spec.command.begin(), spec.command.end());
  return a;
}

std::string first_unsearchable_ancestor(const std::string& path) {
  for (const std::string& p : prefixes(path)) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "";  // bwrap reports a missing path itself
    if (S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) return p;
  }
  return "";
}

std::string stage_for_unprivileged(const std::vector<std::string>& paths) {
  // Which paths need it, and the tops to cover (a top inside another top is covered by it).
  std::vector<std::pair<std::string, std::string>> needed;  // (path, its top)
  for (const std::string& path : paths) {
    std::string top = first_unsearchable_ancestor(path);
    if (!top.empty() && top != path) needed.emplace_back(path, top);
  }
  if (needed.empty()) return "";
  std::set<std::string> tops;
  for (const auto& [path, top] : needed) tops.insert(top);
  for (auto it = tops.begin(); it != tops.end();) {
    bool inner = std::any_of(tops.begin(), tops.end(), [&](const std::string& other) {
      return other != *it && it->rfind(other + "/", 0) == 0;
    });
    it = inner ? tops.erase(it) : std::next(it);
  }
  if (::unshare(CLONE_NEWNS) != 0) return errno_text("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return errno_text("make / private");
  }
  // Hold each path open before its top is covered; bind it back from the fd afterwards.
  std::vector<std::pair<std::string, int>> held;
  for (const auto& [path, top] : needed) {
    int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return errno_text("open " + path);
    held.emplace_back(path, fd);
  }
  std::string err;
  for (const std::string& top : tops) {
    if (::mount("tmpfs", top.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) {
      err = errno_text("cover " + top);
      break;
    }
  }
  for (const auto& [path, fd] : held) {
    if (!err.empty()) break;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      err = errno_text("stat " + path);
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      err = mkdirs(path);
    } else {
      err = mkdirs(dirname_of(path));
      if (err.empty()) {
        int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (f >= 0) ::close(f);
      }
    }
    std::string source = "/proc/self/fd/" + std::to_string(fd);
    if (err.empty() && ::mount(source.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      err = errno_text("bind " + path);
    }
  }
  for (const auto& [path, fd] : held) ::close(fd);
  return err;
}

std::string drop_to_sandbox_user() {
  if (::setgroups(0, nullptr) != 0) return errno_text("setgroups");
  if (::setresgid(kSandboxGid, kSandboxGid, kSandboxGid) != 0) return errno_text("setresgid");
  if (::setresuid(kSandboxUid, kSandboxUid, kSandboxUid) != 0) return errno_text("setresuid");
  if (::getuid() != kSandboxUid || ::geteuid() != kSandboxUid) return "uid did not change";
  if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return errno_text("PR_SET_DUMPABLE");
  return "";
}

std::string apply_limits(const SandboxLimits& l) {
  constexpr int64_t kMiB = 1024 * 1024;
  std::string err;
  lower_limit(RLIMIT_CORE, 0, 0, &err);
  lower_limit(RLIMIT_AS, l.address_space_mb < 0 ? -1 : l.address_space_mb * kMiB, 0, &err);
  lower_limit(RLIMIT_CPU, l.cpu_seconds, 5, &err);
  lower_limit(RLIMIT_FSIZE, l.file_size_mb < 0 ? -1 : l.file_size_mb * kMiB, 0, &err);
  lower_limit(RLIMIT_NOFILE, l.open_files, 0, &err);
  lower_limit(RLIMIT_NPROC, l.processes, 0, &err);
  return err;
}

}  // namespace palladium::agent
