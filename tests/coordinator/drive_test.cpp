#include "coordinator/drive.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "coordinator/interrupt.hpp"
#include "llm/synthetic_provider.hpp"
#include "store/run_store.hpp"

namespace palladium {
namespace {

CoordinatorOptions quiet() {
  CoordinatorOptions o;
  o.scheduler_threads = 1;
  o.quiet_endpoint = true;
  return o;
}

// A run actor's stand-in: answers start with `status`, or with `error` when it is set.
caf::actor stand_in(caf::actor_system& sys, std::string status, caf::error error = {}) {
  return sys.spawn([status, error]() -> caf::behavior {
    return {[=](start_atom) -> caf::result<std::string> {
      if (error) return error;
      return status;
    }};
  });
}

std::shared_ptr<Provider> offline_provider() {
  return make_synthetic_provider(std::filesystem::path(PALLADIUM_SOURCE_DIR) / "llm" / "synthetic");
}

// A database of this test process; a death test's child (which runs the test again from the
// start, "threadsafe" style) finds its parent's through the environment.
struct TempDb {
  std::filesystem::path path;
  bool owner = false;
  TempDb() {
    if (const char* inherited = std::getenv("PALLADIUM_DRIVE_TEST_DB")) {
      path = inherited;
      return;
    }
    owner = true;
    path = std::filesystem::temp_directory_path() /
           ("drive_test_" + std::to_string(getpid()) + ".db");
    setenv("PALLADIUM_DRIVE_TEST_DB", path.c_str(), 1);
  }
  ~TempDb() {
    if (!owner) return;
    unsetenv("PALLADIUM_DRIVE_TEST_DB");
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path.string() + suffix);
  }
};

TEST(Drive, ReturnsTheAnswer) {
  clear_interrupt();
  Coordinator c(quiet());
  DriveOptions how;
  int polls = 0;
  how.poll = [&] { ++polls; };
  auto got = drive<std::string>(c, stand_in(c.system(), "finished"), how, start_atom::value);
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_EQ(*got, "finished");
  c.shutdown();
}

// Issue 25: sweep and eval took an error answer for "no answer" and dropped it. Now it is
// printed with its code, the runs are marked failed, and the caller sees the error.
TEST(Drive, AnErrorAnswerReachesTheUserAndFailsTheRun) {
  clear_interrupt();
  TempDb db;
  std::shared_ptr<RunStore> store = RunStore::open(db.path.string());
  const int64_t run_id = store->begin_or_resume_run("t", "name: t\n");
  Coordinator c(quiet());
  c.start_services(store, offline_provider());
  std::ostringstream err;
  DriveOptions how;
  how.command = "sweep";
  how.failure = "the sweep failed";
  how.running = [run_id] { return std::vector<int64_t>{run_id}; };
  how.err = &err;
  auto actor = stand_in(c.system(), "", make_error(Errc::unavailable, "no agent took job 7"));
  auto got = drive<std::string>(c, actor, how, start_atom::value);
  ASSERT_FALSE(got);
  EXPECT_EQ(errc_of(got.error()), Errc::unavailable);
  EXPECT_NE(err.str().find("palladium sweep: the sweep failed: "), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("no agent took job 7"), std::string::npos) << err.str();
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  c.shutdown();
  auto run = RunStore::open(db.path.string(), RunStore::Mode::read_only)->find_run(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "failed");
  EXPECT_EQ(run->status_reason, "no agent took job 7");
}

// A signal ends the wait for an answer that will not come: the run is marked interrupted, the
// hint printed, and the process ends with 128 + the signal without waiting for the actor.
TEST(DriveDeathTest, ASignalMarksTheRunInterruptedAndExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDb db;
  const int64_t run_id = RunStore::open(db.path.string())->begin_or_resume_run("t", "name: t\n");
  EXPECT_EXIT(
      {
        std::shared_ptr<RunStore> store = RunStore::open(db.path.string());
        Coordinator c(quiet());
        c.start_services(store, offline_provider());
        auto never = c.system().spawn([]() -> caf::behavior {
          return {[](start_atom) -> caf::result<std::string> {
            return caf::delegated<std::string>();  // never answered
          }};
        });
        DriveOptions how;
        how.command = "run";
        how.stop_hint = "rerun to resume.";
        how.running = [run_id] { return std::vector<int64_t>{run_id}; };
        raise(SIGTERM);
        drive<std::string>(c, never, how, start_atom::value);
      },
      ::testing::ExitedWithCode(128 + SIGTERM),
      "interrupted by signal 15; stopping. rerun to resume");
  auto run = RunStore::open(db.path.string(), RunStore::Mode::read_only)->find_run(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "interrupted");
}

}  // namespace
}  // namespace palladium
