#include "actors/job_ledger.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

using namespace std::chrono_literals;
using TP = JobLedger::TimePoint;

wire::Job job(int64_t id, double timeout_s = 10) {
  wire::Job j;
  j.job_id = id;
  j.workload_id = "8p";
  j.code = "def workload(): pass";
  j.timeout_s = timeout_s;
  return j;
}

wire::Hello hello(int slots) {
  wire::Hello h;
  h.agent_id = "a";
  h.slots = slots;
  return h;
}

wire::Result result(int64_t id) {
  wire::Result r;
  r.job_id = id;
  r.verdict = "correct";
  return r;
}

class JobLedgerTest : public ::testing::Test {
 protected:
  JobLedger::Options opts() {
    JobLedger::Options o;
    o.heartbeat = 100ms;
    o.liveness = 3;
    o.lease_grace = 1000ms;
    o.max_attempts = 2;
    return o;
  }
  TP t0 = TP{} + 1h;
};

TEST_F(JobLedgerTest, AssignsUpToFreeSlotsAndSpreadsLoad) {
  JobLedger l(opts());
  for (int i = 1; i <= 5; ++i) l.submit(job(i));
  EXPECT_TRUE(l.assign(t0).empty()) << "no agents yet";
  l.on_hello("A", hello(2), t0);
  l.on_hello("B", hello(1), t0);
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 3u);
  int to_a = 0;
  for (auto& [peer, j] : a) to_a += peer == "A";
  EXPECT_EQ(to_a, 2);
  EXPECT_EQ(l.queued(), 2u);
  EXPECT_EQ(l.in_flight(), 3u);
  EXPECT_EQ(a[0].second.job_id, 1) << "FIFO";
}

TEST_F(JobLedgerTest, ResultFreesTheSlotAndDuplicatesAreRefused) {
  JobLedger l(opts());
  l.on_hello("A", hello(1), t0);
  l.submit(job(1));
  l.submit(job(2));
  ASSERT_EQ(l.assign(t0).size(), 1u);
  EXPECT_EQ(l.on_result("A", result(1)), JobLedger::ResultDisposition::accepted);
  EXPECT_EQ(l.on_result("A", result(1)), JobLedger::ResultDisposition::duplicate);
  EXPECT_EQ(l.on_result("A", result(99)), JobLedger::ResultDisposition::unknown_job);
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].second.job_id, 2);
}

TEST_F(JobLedgerTest, SilentAgentIsDeadAndItsJobsGoToAnother) {
  JobLedger l(opts());
  l.on_hello("A", hello(1), t0);
  l.submit(job(1));
  ASSERT_EQ(l.assign(t0).size(), 1u);
  l.on_hello("B", hello(1), t0);
  // B keeps talking, A goes quiet for more than liveness x heartbeat.
  l.on_seen("B", t0 + 250ms);
  auto s = l.sweep(t0 + 250ms);
  EXPECT_TRUE(s.dead_agents.empty()) << "300 ms of silence is allowed";
  l.on_seen("B", t0 + 350ms);
  s = l.sweep(t0 + 350ms);
  ASSERT_EQ(s.dead_agents, std::vector<std::string>{"A"});
  EXPECT_EQ(s.requeued, std::vector<int64_t>{1});
  auto a = l.assign(t0 + 350ms);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].first, "B");
  // The dead agent's late answer still counts once; B's becomes a duplicate.
  EXPECT_EQ(l.on_result("A", result(1)), JobLedger::ResultDisposition::accepted);
  EXPECT_EQ(l.on_result("B", result(1)), JobLedger::ResultDisposition::duplicate);
}

TEST_F(JobLedgerTest, ExpiredLeaseIsRequeued) {
  JobLedger l(opts());
  l.on_hello("A", hello(1), t0);
  l.submit(job(1, /*timeout_s=*/2));
  ASSERT_EQ(l.assign(t0).size(), 1u);
  l.on_seen("A", t0 + 2900ms);
  EXPECT_TRUE(l.sweep(t0 + 2900ms).requeued.empty()) << "lease = timeout 2 s + grace 1 s";
  l.on_seen("A", t0 + 3100ms);
  EXPECT_EQ(l.sweep(t0 + 3100ms).requeued, std::vector<int64_t>{1});
}

TEST_F(JobLedgerTest, JobLostTooOftenIsAbandonedWithACrashVerdictNotDropped) {
  JobLedger l(opts());  // max_attempts = 2
  l.submit(job(7));
  for (int attempt = 0; attempt < 2; ++attempt) {
    l.on_hello("A", hello(1), t0);
    ASSERT_EQ(l.assign(t0).size(), 1u);
    l.on_bye("A");
  }
  auto s = l.sweep(t0);
  ASSERT_EQ(s.abandoned.size(), 1u);
  EXPECT_EQ(s.abandoned[0].job_id, 7);
  EXPECT_EQ(s.abandoned[0].verdict, "crash");
  EXPECT_TRUE(l.finished(7));
  EXPECT_EQ(l.queued(), 0u);
}

TEST_F(JobLedgerTest, ReHelloMeansRestartSoHeldJobsAreRequeued) {
  JobLedger l(opts());
  l.on_hello("A", hello(1), t0);
  l.submit(job(1));
  ASSERT_EQ(l.assign(t0).size(), 1u);
  l.on_hello("A", hello(1), t0 + 10ms);
  EXPECT_EQ(l.in_flight(), 0u);
  auto a = l.assign(t0 + 10ms);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].second.job_id, 1);
}

TEST_F(JobLedgerTest, SubmittingAKnownJobTwiceIsIgnored) {
  JobLedger l(opts());
  l.submit(job(1));
  l.submit(job(1));
  EXPECT_EQ(l.queued(), 1u);
}

}  // namespace
}  // namespace palladium
