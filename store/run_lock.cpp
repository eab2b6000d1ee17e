#include "store/run_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "store/store_error.hpp"

namespace palladium {
namespace {

// This process's locks. Every change happens under the mutex, so a lock
// being released and one being taken for the same database never
// interleave (closing any descriptor of the file would drop the other's
// POSIX lock).
struct Held {
  int fd = -1;
  std::string path;
  int holders = 0;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

// This process's entries. A child made by fork() inherits the map but not
// the POSIX locks, so it starts over with an empty one.
std::map<std::string, Held>& registry() {
  static std::map<std::string, Held> r;
  static pid_t owner = getpid();
  if (owner != getpid()) {
    r.clear();  // the inherited descriptors are close-on-exec; leave them
    owner = getpid();
  }
  return r;
}

std::string canonical(const std::string& db_path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(db_path, ec);
  return ec ? db_path : p.string();
}

std::optional<pid_t> read_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return std::nullopt;
  char* end = nullptr;
  const long pid = std::strtol(buf, &end, 10);
  if (end == buf || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

// A POSIX record lock on the whole file. Unlike flock(2), F_GETLK names the
// holder's pid without taking the lock, so a reader's probe can never make
// a starting writer fail.
struct flock whole_file(short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  return fl;
}

std::optional<pid_t> probe_holder(int fd) {
  struct flock probe = whole_file(F_WRLCK);
  if (fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK) return probe.l_pid;
  return std::nullopt;
}

}  // namespace

std::string RunLock::lock_path(const std::string& db_path) { return db_path + ".lock"; }

std::shared_ptr<RunLock> RunLock::acquire(const std::string& db_path, bool* newly_taken) {
  const std::string key = canonical(db_path);
  std::lock_guard<std::mutex> guard(registry_mutex());
  if (newly_taken) *newly_taken = false;
  auto it = registry().find(key);
  if (it != registry().end()) {
    ++it->second.holders;
    return std::shared_ptr<RunLock>(new RunLock(key));
  }

  const std::string path = lock_path(key);
  // Retry when the file we locked was unlinked by another process releasing
  // it between our open() and our fcntl(): that lock guards nothing.
  for (int tries = 0; tries < 8; ++tries) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw StoreError("run store '" + db_path + "': cannot create its lock file '" + path +
                       "': " + std::strerror(errno));
    }
    struct flock want = whole_file(F_WRLCK);
    if (fcntl(fd, F_SETLK, &want) != 0) {
      const int err = errno;
      std::optional<pid_t> pid = probe_holder(fd);
      if (!pid) pid = read_pid(fd);
      ::close(fd);
      if (err == EACCES || err == EAGAIN) {
        throw StoreError("run store '" + db_path + "' is in use by another run (pid " +
                         (pid ? std::to_string(*pid) : std::string("unknown")) +
                         ", lock file '" + path +
                         "'): one run per database; wait for it to end or use another --db");
      }
      throw StoreError("run store '" + db_path + "': cannot lock '" + path +
                       "': " + std::strerror(err));
    }
    struct stat opened {}, named {};
    if (fstat(fd, &opened) != 0 || stat(path.c_str(), &named) != 0 ||
        opened.st_ino != named.st_ino || opened.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd, 0) != 0 ||
        pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const std::string why = std::strerror(errno);
      ::unlink(path.c_str());
      ::close(fd);
      throw StoreError("run store '" + db_path + "': cannot write its lock file '" + path +
                       "': " + why);
    }
    registry()[key] = Held{fd, path, 1};
    if (newly_taken) *newly_taken = true;
    return std::shared_ptr<RunLock>(new RunLock(key));
  }
  throw StoreError("run store '" + db_path + "': its lock file '" + path +
                   "' keeps being replaced; is another run starting and stopping?");
}

std::optional<pid_t> RunLock::holder(const std::string& db_path) {
  const std::string key = canonical(db_path);
  // Held across the probe: closing the probe's descriptor must not happen
  // while this process holds the lock (it would drop it), so that case is
  // answered from the registry.
  std::lock_guard<std::mutex> guard(registry_mutex());
  if (registry().count(key)) return getpid();
  const int fd = ::open(lock_path(key).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> pid = probe_holder(fd);
  ::close(fd);
  return pid;
}

RunLock::~RunLock() {
  std::lock_guard<std::mutex> guard(registry_mutex());
  auto it = registry().find(key_);
  if (it == registry().end() || --it->second.holders > 0) return;
  // Unlink while still holding the lock, so nobody can lock this inode
  // after it stops guarding anything (acquire() checks the inode).
  ::unlink(it->second.path.c_str());
  ::close(it->second.fd);
  registry().erase(it);
}

}  // namespace palladium
