// RunLock: one writing process per run database.
//
// Two `palladium run`s on one database would interleave their samples under
// one run and pay twice; SQLite's own locking only serialises their
// transactions. So a writer holds an exclusive POSIX record lock
// (fcntl F_SETLK) on "<db>.lock" for as long as it has the database open,
// with its pid written inside for people. The kernel drops the lock when the
// process dies, however it dies (SIGKILL included), so a crashed run never
// leaves a stale lock behind; a lock file left by one is simply re-locked.
//
// Within one process the lock is shared: a second acquire() of the same
// database (e.g. the CLI marking a run interrupted beside the store actor's
// connection) returns the same lock, which is released when the last holder
// lets go. The file is removed on release.
//
// Thread-safe. Errors throw StoreError.

#ifndef PALLADIUM_STORE_RUN_LOCK_HPP_
#define PALLADIUM_STORE_RUN_LOCK_HPP_

#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>

namespace palladium {

class RunLock {
 public:
  // The lock file of database `db_path`: db_path + ".lock".
  static std::string lock_path(const std::string& db_path);

  // Takes the lock for `db_path`, or shares this process's; sets
  // `*newly_taken` (if given) to whether this call took it. Throws
  // StoreError naming the database and the holder's pid when another
  // process holds it, or when the lock file cannot be created.
  static std::shared_ptr<RunLock> acquire(const std::string& db_path,
                                          bool* newly_taken = nullptr);

  // The pid of the process holding the lock of `db_path` (this process
  // included), or nullopt when nobody does. Never creates the file; for
  // readers such as `palladium status`.
  static std::optional<pid_t> holder(const std::string& db_path);

  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  explicit RunLock(std::string key) : key_(std::move(key)) {}
  std::string key_;  // canonical database path: this process's registry key
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_LOCK_HPP_
