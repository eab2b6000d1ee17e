#include "sandbox/sandbox_cgroup.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace palladium::agent {

namespace {

constexpr const char* kPrefix = "palladium-sandbox-";

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// Writes `value` with one write(2), as cgroup files need. "" on success.
std::string write_file(const std::string& path, const std::string& value) {
  std::FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) return errno_text("open " + path);
  std::setvbuf(f, nullptr, _IONBF, 0);
  bool ok = std::fwrite(value.data(), 1, value.size(), f) == value.size();
  int saved = errno;
  std::fclose(f);
  errno = saved;
  return ok ? "" : errno_text("write " + value + " to " + path);
}

struct Mount {
  std::string point, root, fstype;
  std::vector<std::string> options;  // super options (v1: the controllers)
};

std::vector<Mount> cgroup_mounts() {
  std::vector<Mount> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    auto left = split(line.substr(0, dash), ' ');
    auto right = split(line.substr(dash + 3), ' ');
    if (left.size() < 5 || right.size() < 3) continue;
    if (right[0] != "cgroup" && right[0] != "cgroup2") continue;
    out.push_back({left[4], left[3], right[0], split(right[2], ',')});
  }
  return out;
}

// This process's cgroup path in the hierarchy whose /proc/self/cgroup controller field is
// `controllers` ("" for v2), or whose field lists `controller`.
bool own_path(const std::string& controller, bool v2, std::string* out) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string field = line.substr(first + 1, second - first - 1);
    bool match = v2 ? (line.substr(0, first) == "0" && field.empty())
                    : [&] {
                        for (const auto& c : split(field, ',')) {
                          if (c == controller) return true;
                        }
                        return false;
                      }();
    if (match) {
      *out = line.substr(second + 1);
      return true;
    }
  }
  return false;
}

std::string join_path(const Mount& m, const std::string& path) {
  std::string rel = path;
  if (m.root != "/" && rel.rfind(m.root, 0) == 0) rel = rel.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.point + rel;
}

// Removes the empty cgroups earlier sandboxes left under `dir` (rmdir refuses a busy one).
void sweep(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string mine = kPrefix + std::to_string(::getpid());
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) == 0 && name != mine) ::rmdir((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

// mkdir dir/palladium-sandbox-<pid>, the limits, and this process into it. "" on success.
std::string make_and_enter_once(const std::string& parent,
                           const std::vector<std::pair<std::string, std::string>>& limits,
                           std::string* made) {
  sweep(parent);
  std::string dir = parent + "/" + kPrefix + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return errno_text("mkdir " + dir);
  for (const auto& [file, value] : limits) {
    std::string path = dir + "/" + file;
    if (file.find("swap") != std::string::npos || file.find("memsw") != std::string::npos) {
      // Swap accounting is often absent: the memory limit alone still holds.
      if (::access(path.c_str(), F_OK) != 0) continue;
      write_file(path, value);
      continue;
    }
    if (std::string err = write_file(path, value); !err.empty()) {
      ::rmdir(dir.c_str());
      return err;
    }
  }
  if (std::string err = write_file(dir + "/cgroup.procs", std::to_string(::getpid()));
      !err.empty()) {
    ::rmdir(dir.c_str());
    return err;
  }
  *made = dir;
  return "";
}

// Another launcher's sweep may remove the new cgroup between its mkdir and the move (it was
// empty then): try again.
std::string make_and_enter(const std::string& parent,
                           const std::vector<std::pair<std::string, std::string>>& limits,
                           std::string* made) {
  std::string err;
  for (int attempt = 0; attempt < 3; ++attempt) {
    err = make_and_enter_once(parent, limits, made);
    if (err.empty()) return "";
  }
  return err;
}

bool lists(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

std::string try_v2(const CgroupLimits& limits, CgroupPlacement* out) {
  const Mount* v2 = nullptr;
  auto mounts = cgroup_mounts();
  for (const auto& m : mounts) {
    if (m.fstype == "cgroup2") v2 = &m;
  }
  if (v2 == nullptr) return "no cgroup2 mount";
  std::string parent = limits.parent;
  bool delegated = !parent.empty();
  if (!delegated) {
    std::string path;
    if (!own_path("", true, &path)) return "no cgroup v2 entry in /proc/self/cgroup";
    parent = join_path(*v2, path);
  }
  std::string controllers, enabled;
  read_file(parent + "/cgroup.controllers", &controllers);
  if (!lists(controllers, "memory") || !lists(controllers, "pids")) {
    return "cgroup v2 at " + parent + " offers controllers [" +
           controllers.substr(0, controllers.find('\n')) + "], not memory and pids";
  }
  read_file(parent + "/cgroup.subtree_control", &enabled);
  if (!lists(enabled, "memory") || !lists(enabled, "pids")) {
    if (!delegated) {
      return "memory and pids are not enabled in " + parent +
             "/cgroup.subtree_control (a cgroup with processes cannot enable them; point "
             "PALLADIUM_SANDBOX_CGROUP at a delegated cgroup)";
    }
    if (std::string err = write_file(parent + "/cgroup.subtree_control", "+memory +pids");
        !err.empty()) {
      return err;
    }
  }
  std::string made;
  if (std::string err = make_and_enter(
          parent,
          {{"memory.max", std::to_string(limits.memory_mb * 1024 * 1024)},
           {"memory.swap.max", "0"},
           {"pids.max", std::to_string(limits.pids)}},
          &made);
      !err.empty()) {
    return err;
  }
  out->version = "v2";
  out->dirs = {made};
  return "";
}

std::string try_v1(const CgroupLimits& limits, CgroupPlacement* out) {
  auto mounts = cgroup_mounts();
  std::vector<std::string> made;
  std::vector<std::string> parents;
  std::string err;
  for (const std::string controller : {"memory", "pids"}) {
    const Mount* mount = nullptr;
    for (const auto& m : mounts) {
      for (const auto& o : m.options) {
        if (m.fstype == "cgroup" && o == controller) mount = &m;
      }
    }
    std::string path;
    if (mount == nullptr) {
      err = "no cgroup v1 " + controller + " hierarchy";
      break;
    }
    if (!own_path(controller, false, &path)) {
      err = "no " + controller + " entry in /proc/self/cgroup";
      break;
    }
    std::string parent = join_path(*mount, path);
    std::vector<std::pair<std::string, std::string>> files;
    if (controller == std::string("memory")) {
      std::string bytes = std::to_string(limits.memory_mb * 1024 * 1024);
      files = {{"memory.limit_in_bytes", bytes}, {"memory.memsw.limit_in_bytes", bytes}};
    } else {
      files = {{"pids.max", std::to_string(limits.pids)}};
    }
    std::string dir;
    err = make_and_enter(parent, files, &dir);
    if (!err.empty()) break;
    made.push_back(dir);
    parents.push_back(parent);
  }
  if (!err.empty()) {  // all or nothing: leave what was entered
    for (std::size_t i = 0; i < made.size(); ++i) {
      write_file(parents[i] + "/cgroup.procs", std::to_string(::getpid()));
      ::rmdir(made[i].c_str());
    }
    return err;
  }
  out->version = "v1";
  out->dirs = made;
  return "";
}

}  // namespace

std::string CgroupPlacement::describe(const CgroupLimits& limits) const {
  if (version.empty()) return "none: " + reason;
  std::string text = version;
  for (const auto& d : dirs) text += " " + d;
  return text + " memory=" + std::to_string(limits.memory_mb) + "MiB pids=" +
         std::to_string(limits.pids);
}

CgroupPlacement enter_sandbox_cgroup(const CgroupLimits& limits) {
  CgroupPlacement out;
  std::string v2 = try_v2(limits, &out);
  if (v2.empty()) return out;
  if (!limits.parent.empty()) {  // a delegated cgroup was asked for: do not fall back silently
    out.reason = "cgroup v2: " + v2;
    return out;
  }
  std::string v1 = try_v1(limits, &out);
  if (v1.empty()) return out;
  out.reason = "cgroup v2: " + v2 + "; cgroup v1: " + v1;
  return out;
}

}  // namespace palladium::agent
