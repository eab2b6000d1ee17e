#include "actors/store_actor.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "actors/errors.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

SampleRecord sample(int64_t run_id, int index) {
  SampleRecord s;
  s.run_id = run_id;
  s.workload = "8p";
  s.method = "iterative";
  s.seed = 1;
  s.sample_index = index;
  s.prompt_system = "system";
  s.prompt_user = "user " + std::to_string(index);
  s.response = "response " + std::to_string(index);
  s.code = "def workload(x): return x  # " + std::to_string(index) + "\n";
  return s;
}

// Another process's view of the file: it sees committed transactions only.
int64_t committed_count(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

caf::actor_system_config& quiet(caf::actor_system_config& cfg) {
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.console.verbosity", caf::atom("quiet"));
  return cfg;
}

// The durability contract: writes queued behind each other share one
// commit, and no sender hears back before that commit, so whatever a reply
// says is already visible to another connection (is in the file). A write
// that fails gets its own error and does not undo the rest of its batch.
TEST(StoreActorTest, WritesShareOneCommitAndEveryReplyFollowsIt) {
  TempDb tmp;
  auto store = std::shared_ptr<RunStore>(RunStore::open(tmp.path()));
  const int64_t run_id = store->begin_or_resume_run("r", "config");

  // Hold SQLite's write lock from outside, so the actor's first write waits
  // in BEGIN while every request below queues in its mailbox: they then all
  // join the batch that write opens, whatever the scheduling.
  sqlite3* blocker = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &blocker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(blocker, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  caf::actor_system_config cfg;
  caf::actor_system sys{quiet(cfg)};
  auto actor = spawn_store(sys, store);
  caf::scoped_actor self{sys};
  constexpr int kGood = 20;
  using Handle = decltype(self->request(actor, caf::infinite, put_sample_atom::value,
                                        SampleRecord{}));
  std::vector<Handle> puts;
  for (int i = 0; i < kGood; ++i)
    puts.push_back(self->request(actor, caf::infinite, put_sample_atom::value, sample(run_id, i)));
  auto bad = self->request(actor, caf::infinite, put_sample_atom::value, sample(run_id + 99, 0));
  ASSERT_EQ(sqlite3_exec(blocker, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(blocker);

  for (int i = 0; i < kGood; ++i) {
    puts[i].receive(
        [&](const PutSampleResult& put) {
          EXPECT_TRUE(put.inserted);
          EXPECT_EQ(committed_count(tmp.path(), "SELECT count(*) FROM samples WHERE id = " +
                                                    std::to_string(put.id)),
                    1)
              << "sample " << i << " was acknowledged before it was committed";
        },
        [&](caf::error& e) { ADD_FAILURE() << "sample " << i << ": " << to_string(e); });
  }
  bad.receive([](const PutSampleResult&) { ADD_FAILURE() << "a sample of an unknown run"; },
              [](caf::error& e) { EXPECT_EQ(errc_of(e), Errc::invalid_argument) << to_string(e); });

  self->request(actor, caf::infinite, store_stats_atom::value)
      .receive(
          [&](const StoreStats& stats) {
            EXPECT_EQ(stats.writes, kGood + 1);
            EXPECT_EQ(stats.failed_writes, 1);
            EXPECT_EQ(stats.commits, 1);
            EXPECT_EQ(stats.largest_batch, kGood + 1);
            EXPECT_GT(stats.thread_cpu_ms, 0.0);
          },
          [](caf::error& e) { ADD_FAILURE() << to_string(e); });
  EXPECT_EQ(committed_count(tmp.path(), "SELECT count(*) FROM samples"), kGood);
  self->send_exit(actor, caf::exit_reason::user_shutdown);
}

// max_batch bounds a batch: 1 commits every write on its own (v1's way,
// the benchmark's baseline).
TEST(StoreActorTest, MaxBatchBoundsTheWritesOfOneCommit) {
  TempDb tmp;
  auto store = std::shared_ptr<RunStore>(RunStore::open(tmp.path()));
  const int64_t run_id = store->begin_or_resume_run("r", "config");
  caf::actor_system_config cfg;
  caf::actor_system sys{quiet(cfg)};
  StoreActorOptions options;
  options.max_batch = 1;
  auto actor = spawn_store(sys, store, options);
  caf::scoped_actor self{sys};
  constexpr int kWrites = 6;
  using Handle = decltype(self->request(actor, caf::infinite, put_sample_atom::value,
                                        SampleRecord{}));
  std::vector<Handle> puts;
  for (int i = 0; i < kWrites; ++i)
    puts.push_back(self->request(actor, caf::infinite, put_sample_atom::value, sample(run_id, i)));
  for (auto& h : puts)
    h.receive([](const PutSampleResult&) {}, [](caf::error& e) { ADD_FAILURE() << to_string(e); });
  self->request(actor, caf::infinite, store_stats_atom::value)
      .receive(
          [&](const StoreStats& stats) {
            EXPECT_EQ(stats.commits, kWrites);
            EXPECT_EQ(stats.largest_batch, 1);
          },
          [](caf::error& e) { ADD_FAILURE() << to_string(e); });
  self->send_exit(actor, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace palladium
