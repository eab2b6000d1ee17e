// agent/slot_pool: the agent's slot bookkeeping on a fake clock (time points built from an
// epoch; the pool never reads a clock).

#include "agent/slot_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;
using State = SlotPool::State;
using Timer = SlotPool::Timer;
using Admission = SlotPool::Admission;

const SlotPool::Clock::time_point kT0{};

wire::Job job(int64_t id, double timeout_s = 10.0) {
  wire::Job j;
  j.job_id = id;
  j.lease = 100 + id;
  j.workload_id = "8p";
  j.timeout_s = timeout_s;
  return j;
}

// A pool whose `slots` judges started at kT0 and said ready.
SlotPool ready_pool(int slots) {
  SlotPool pool(slots, 5000ms);
  for (int i = 0; i < slots; ++i) {
    pool.started(i, kT0);
    EXPECT_TRUE(pool.ready(i));
  }
  return pool;
}

TEST(SlotPoolTest, AStartingJudgeIsIdleOnceReadyAndOverdueWithout) {
  SlotPool pool(2, 5000ms);
  EXPECT_EQ(pool.state(0), State::kDown);
  pool.started(0, kT0);
  pool.started(1, kT0 + 1s);
  EXPECT_EQ(pool.state(0), State::kStarting);
  EXPECT_EQ(pool.deadline(1), kT0 + 6s);
  EXPECT_TRUE(pool.ready(0));
  EXPECT_FALSE(pool.ready(0));  // a second ready changes nothing
  EXPECT_FALSE(pool.all_idle());
  EXPECT_TRUE(pool.due(kT0 + 5999ms).empty());
  EXPECT_EQ(pool.due(kT0 + 6s), (std::vector<std::pair<int, Timer>>{{1, Timer::kReadyTimeout}}));
  EXPECT_EQ(pool.next_wakeup(kT0 + 1h), kT0 + 6s);
}

TEST(SlotPoolTest, JobsGoToIdleSlotsInOrderWithTheirOwnDeadlines) {
  SlotPool pool = ready_pool(2);
  EXPECT_EQ(pool.submit(job(1, 3.0)), Admission::kAccepted);
  EXPECT_EQ(pool.submit(job(2, 0.0)), Admission::kAccepted);
  EXPECT_EQ(pool.assign(kT0 + 1s), (std::vector<int>{0, 1}));
  ASSERT_NE(pool.job(0), nullptr);
  EXPECT_EQ(pool.job(0)->job_id, 1);
  EXPECT_EQ(pool.state(1), State::kBusy);
  EXPECT_EQ(pool.deadline(0), kT0 + 4s);
  EXPECT_EQ(pool.deadline(1), kT0 + 1s + 600s);  // no timeout_s: the default
  EXPECT_EQ(pool.next_wakeup(kT0 + 1h), kT0 + 4s);
  EXPECT_EQ(pool.due(kT0 + 4s), (std::vector<std::pair<int, Timer>>{{0, Timer::kJobTimeout}}));
  EXPECT_TRUE(pool.assign(kT0 + 2s).empty());
}

TEST(SlotPoolTest, ADuplicateJobIsDroppedWhetherRunningOrQueued) {
  SlotPool pool = ready_pool(1);
  pool.submit(job(1));
  pool.assign(kT0);
  EXPECT_EQ(pool.submit(job(1)), Admission::kDuplicateRunning);
  EXPECT_EQ(pool.submit(job(2)), Admission::kQueued);  // the coordinator's prefetched one
  EXPECT_EQ(pool.submit(job(2)), Admission::kDuplicateQueued);
  EXPECT_EQ(pool.queued(), 1u);
}

TEST(SlotPoolTest, MoreThanOneJobBeyondTheSlotsIsOverAssignmentButStillQueued) {
  SlotPool pool = ready_pool(1);
  pool.submit(job(1));
  pool.assign(kT0);
  EXPECT_EQ(pool.submit(job(2)), Admission::kQueued);
  EXPECT_EQ(pool.submit(job(3)), Admission::kOverAssigned);
  EXPECT_EQ(pool.queued(), 2u);
  auto done = pool.complete(0, 1);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(pool.assign(kT0 + 1s), std::vector<int>{0});
  EXPECT_EQ(pool.job(0)->job_id, 2);  // first in, first out
}

TEST(SlotPoolTest, AResultFreesItsSlotAndAStaleOneIsRefused) {
  SlotPool pool = ready_pool(1);
  pool.submit(job(7));
  pool.assign(kT0 + 2s);
  EXPECT_FALSE(pool.complete(0, 8).has_value());
  EXPECT_EQ(pool.state(0), State::kBusy);
  auto done = pool.complete(0, 7);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.lease, 107);
  EXPECT_EQ(done->started, kT0 + 2s);
  EXPECT_EQ(pool.state(0), State::kIdle);
  EXPECT_EQ(pool.job(0), nullptr);
  EXPECT_FALSE(pool.complete(0, 7).has_value());
}

TEST(SlotPoolTest, AJobThatKillsItsJudgeIsRetriedFirstTwiceThenCharged) {
  SlotPool pool = ready_pool(1);
  pool.submit(job(1));
  pool.submit(job(2));
  for (int death = 1; death <= SlotPool::kJudgeRetries; ++death) {
    EXPECT_EQ(pool.assign(kT0), std::vector<int>{0});
    ASSERT_EQ(pool.job(0)->job_id, 1);  // back at the front, ahead of job 2
    SlotPool::Lost lost = pool.judge_lost(0);
    EXPECT_EQ(lost.deaths, death);
    EXPECT_FALSE(lost.charged.has_value());
    EXPECT_EQ(pool.queued(), 2u);
    ASSERT_TRUE(pool.restart_now(0));
    pool.started(0, kT0);
    pool.ready(0);
  }
  pool.assign(kT0 + 1s);
  SlotPool::Lost lost = pool.judge_lost(0);
  EXPECT_EQ(lost.deaths, SlotPool::kJudgeRetries + 1);
  ASSERT_TRUE(lost.charged.has_value());
  EXPECT_EQ(lost.charged->job.job_id, 1);
  EXPECT_EQ(lost.charged->started, kT0 + 1s);
  EXPECT_EQ(pool.queued(), 1u);
}

TEST(SlotPoolTest, AJobThatFinishesAfterADeathStartsItsCountAgainNextTime) {
  SlotPool pool = ready_pool(1);
  pool.submit(job(1));
  pool.assign(kT0);
  pool.judge_lost(0);
  pool.started(0, kT0);
  pool.ready(0);
  pool.assign(kT0);
  ASSERT_TRUE(pool.complete(0, 1).has_value());
  pool.submit(job(1));  // the coordinator sends it again (a new lease)
  pool.assign(kT0);
  EXPECT_EQ(pool.judge_lost(0).deaths, 1);
}

TEST(SlotPoolTest, RepeatedStartFailuresBackOffDoublingUpToThirtySeconds) {
  SlotPool pool(1, 5000ms);
  pool.started(0, kT0);
  EXPECT_TRUE(pool.restart_now(0));
  pool.start_failed(0);  // died before ready
  EXPECT_FALSE(pool.restart_now(0));
  std::vector<long> delays;
  for (int i = 0; i < 7; ++i) delays.push_back(static_cast<long>(pool.back_off(0, kT0).count()));
  EXPECT_EQ(delays, (std::vector<long>{2000, 4000, 8000, 16000, 30000, 30000, 30000}));
  EXPECT_EQ(pool.state(0), State::kDown);
  EXPECT_TRUE(pool.due(kT0 + 29s).empty());
  EXPECT_EQ(pool.due(kT0 + 30s), (std::vector<std::pair<int, Timer>>{{0, Timer::kRestart}}));
  EXPECT_EQ(pool.next_wakeup(kT0 + 1h), kT0 + 30s);
  pool.started(0, kT0 + 30s);
  EXPECT_TRUE(pool.ready(0));
  EXPECT_TRUE(pool.restart_now(0));  // a ready judge clears the failures
}

TEST(SlotPoolTest, ADownSlotTakesNoJob) {
  SlotPool pool(1, 5000ms);
  EXPECT_EQ(pool.back_off(0, kT0), 1000ms);
  EXPECT_EQ(pool.submit(job(1)), Admission::kQueued);
  EXPECT_TRUE(pool.assign(kT0 + 1s).empty());
  EXPECT_EQ(pool.queued(), 1u);
}

}  // namespace
}  // namespace palladium::agent
