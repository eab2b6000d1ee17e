// The ledger with a fake clock: leases, liveness, requeue, capability matching, late results,
// heartbeats due, and the interval that stretches with the fleet and with long evaluations.
#include "actors/job_ledger.hpp"

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace palladium {
namespace {

using namespace std::chrono_literals;
using TP = JobLedger::TimePoint;
using RD = JobLedger::ResultDisposition;

wire::Job job(int64_t id, double timeout_s = 10) {
  wire::Job j;
  j.job_id = id;
  j.workload_id = "8p";
  j.code = "def workload(): pass";
  j.timeout_s = timeout_s;
  return j;
}

Capabilities cpu_caps() {
  Capabilities c;
  c.backend = "interpret";
  c.device_kind = "cpu";
  c.jax_version = "0.10.2";
  c.stages = required_stages(wire::kCheckFull);
  return c;
}

Capabilities tpu_caps() {
  Capabilities c = cpu_caps();
  c.backend = "tpu";
  c.device_kind = "TPU v6 lite";
  c.libtpu_version = "0.0.42.1";
  c.stages |= stage_bit(Stage::compile);
  return c;
}

Requirement need(const std::string& backend = "interpret") {
  Requirement r;
  r.backend = backend;
  r.stages = required_stages(wire::kCheckFull);
  return r;
}

wire::Result answer(const JobLedger::Assignment& a) {
  wire::Result r;
  r.job_id = a.job_id;
  r.lease = a.lease;
  r.evaluation.verdict = Verdict::correct;
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
    o.max_strikes = 2;
    o.prefetch = 0;  // PrefetchFillsIdleSlotsFirst covers it
    return o;
  }
  void hello(JobLedger& l, const std::string& peer, int slots, TP at,
             const Capabilities& caps = cpu_caps()) {
    l.on_hello(peer, "name-" + peer, caps, slots, at);
  }
  RD result(JobLedger& l, const std::string& peer, const wire::Result& r) {
    return l.on_result(peer, r, nullptr, t0);
  }
  // The job a dispatched frame carries (an empty one, and a failure, if it carries none).
  static wire::Job job_in(std::string_view bytes) {
    auto d = wire::decode(bytes);
    if (!d.ok() || !std::holds_alternative<wire::Job>(*d.message)) {
      ADD_FAILURE() << "not a job frame: " << d.error;
      return wire::Job{};
    }
    return std::get<wire::Job>(*d.message);
  }
  TP t0 = TP{} + 1h;
};

TEST_F(JobLedgerTest, AssignsUpToFreeSlotsAndSpreadsLoad) {
  JobLedger l(opts());
  for (int i = 1; i <= 5; ++i) l.submit(job(i), need());
  EXPECT_TRUE(l.assign(t0).empty()) << "no agents yet";
  hello(l, "A", 2, t0);
  hello(l, "B", 1, t0);
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 3u);
  int to_a = 0;
  for (auto& x : a) to_a += x.peer == "A";
  EXPECT_EQ(to_a, 2);
  EXPECT_EQ(a[1].peer, "B") << "round robin: A, B, then A again";
  EXPECT_EQ(l.queued(), 2u);
  EXPECT_EQ(l.in_flight(), 3u);
  EXPECT_EQ(a[0].job_id, 1) << "FIFO";
  std::set<int64_t> leases;
  for (auto& x : a) leases.insert(x.lease);
  EXPECT_EQ(leases.size(), 3u) << "every dispatch has its own lease";
}

TEST_F(JobLedgerTest, PrefetchFillsIdleSlotsFirstThenQueuesOneMorePerAgent) {
  JobLedger::Options o = opts();
  o.prefetch = 1;
  JobLedger l(o);
  hello(l, "A", 1, t0);
  hello(l, "B", 1, t0);
  l.submit(job(1), need());
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  l.submit(job(2), need());
  auto second = l.assign(t0);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0].peer, first[0].peer) << "an idle agent beats a prefetch queue";
  for (int i = 3; i <= 6; ++i) l.submit(job(i), need());
  auto more = l.assign(t0);
  EXPECT_EQ(more.size(), 2u) << "one prefetched job each, no more";
  EXPECT_EQ(l.queued(), 2u);
  // A prefetched job's lease allows for the job ahead of it: 2 x 10 s + 1 s.
  l.on_seen("A", t0 + 15s);
  l.on_seen("B", t0 + 15s);
  auto s = l.sweep(t0 + 15s);
  EXPECT_EQ(s.requeued.size(), 2u) << "the running jobs' leases (11 s) expired";
  EXPECT_TRUE(s.struck_out.empty());
}

TEST_F(JobLedgerTest, TheFrameIsTheJobWithItsLease) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(5), need());
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 1u);
  wire::Job j = job_in(a[0].frame.bytes());
  EXPECT_EQ(j.job_id, 5);
  EXPECT_EQ(j.lease, a[0].lease);
  EXPECT_EQ(j.code, "def workload(): pass");
}

TEST_F(JobLedgerTest, ARequeuedFrameHasItsNewLeaseAndTheFirstFrameKeepsItsOwn) {
  // The frames share the ledger's buffer (no copy of the code per dispatch): a requeue must
  // not write its lease over bytes that may still be on their way out to the first agent.
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1), need());
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  std::string first_bytes(first[0].frame.bytes());
  l.on_bye("A");
  hello(l, "B", 1, t0);
  auto second = l.assign(t0);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_NE(second[0].lease, first[0].lease);
  EXPECT_EQ(first[0].frame.bytes(), first_bytes) << "the first frame was written over";
  wire::Job j = job_in(second[0].frame.bytes());
  EXPECT_EQ(j.lease, second[0].lease);
  EXPECT_EQ(j.code, "def workload(): pass");
  wire::Job expected = job(1);
  expected.lease = second[0].lease;
  EXPECT_EQ(std::string(second[0].frame.bytes()), wire::encode(expected));
}

TEST_F(JobLedgerTest, ResultFreesTheSlotAndOnlyTheLeaseHolderIsHeard) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  hello(l, "B", 1, t0);
  l.submit(job(1), need());
  l.submit(job(2), need());
  l.submit(job(3), need());
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 2u);
  const auto& to_a = a[0].peer == "A" ? a[0] : a[1];
  // B forges A's answer: refused, and A's lease stays live.
  EXPECT_EQ(result(l, "B", answer(to_a)), RD::not_holder);
  EXPECT_EQ(result(l, "X", answer(to_a)), RD::not_holder) << "a stranger";
  wire::Result wrong_job = answer(to_a);
  wrong_job.job_id = 3;
  EXPECT_EQ(result(l, "A", wrong_job), RD::unknown_job) << "lease of another job";
  wire::Result made_up = answer(to_a);
  made_up.lease = 999999;
  EXPECT_EQ(result(l, "A", made_up), RD::unknown_job);
  int dispatches = 0;
  EXPECT_EQ(l.on_result("A", answer(to_a), &dispatches, t0), RD::accepted);
  EXPECT_EQ(dispatches, 1);
  EXPECT_EQ(result(l, "A", answer(to_a)), RD::stale_lease) << "a duplicate";
  auto next = l.assign(t0);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].peer, "A");
  EXPECT_EQ(next[0].job_id, 3);
}

TEST_F(JobLedgerTest, AFinishedJobLeavesNothingBehind) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1), need());
  auto a = l.assign(t0);
  ASSERT_EQ(result(l, "A", answer(a[0])), RD::accepted);
  EXPECT_EQ(l.queued(), 0u);
  EXPECT_EQ(l.in_flight(), 0u);
  // Not remembered: the same id is a new job (the store, not the ledger, dedups candidates).
  EXPECT_TRUE(l.submit(job(1), need()));
}

TEST_F(JobLedgerTest, SilentAgentIsDeadAndItsJobsGoToAnother) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1), need());
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  hello(l, "B", 1, t0);
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
  EXPECT_EQ(a[0].peer, "B");
  // The dead agent's late answer is dropped; B's is the one answer.
  EXPECT_EQ(result(l, "A", answer(first[0])), RD::stale_lease);
  int dispatches = 0;
  EXPECT_EQ(l.on_result("B", answer(a[0]), &dispatches, t0 + 350ms), RD::accepted);
  EXPECT_EQ(dispatches, 2) << "evaluations.attempts: the lost lease counts";
}

TEST_F(JobLedgerTest, ExpiredLeaseIsRequeuedAndTheSlowAgentKeepsItsSlotUntilItAnswers) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1, /*timeout_s=*/2), need());
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  l.on_seen("A", t0 + 2900ms);
  EXPECT_TRUE(l.sweep(t0 + 2900ms).requeued.empty()) << "lease = timeout 2 s + grace 1 s";
  l.on_seen("A", t0 + 3100ms);
  EXPECT_EQ(l.sweep(t0 + 3100ms).requeued, std::vector<int64_t>{1});
  EXPECT_TRUE(l.assign(t0 + 3100ms).empty()) << "A is still busy with the old lease";
  hello(l, "B", 1, t0 + 3100ms);
  auto again = l.assign(t0 + 3100ms);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].peer, "B");
  // A's late result is deduplicated, and frees A's slot.
  EXPECT_EQ(result(l, "A", answer(first[0])), RD::stale_lease);
  l.submit(job(2), need());
  auto next = l.assign(t0 + 3200ms);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].peer, "A");
  EXPECT_EQ(result(l, "B", answer(again[0])), RD::accepted);
}

TEST_F(JobLedgerTest, AnAgentThatLetsLeasesExpireIsStruckOut) {
  JobLedger::Options o = opts();
  o.max_attempts = 10;
  JobLedger l(o);
  hello(l, "A", 2, t0);
  l.submit(job(1, 1), need());
  l.submit(job(2, 1), need());
  ASSERT_EQ(l.assign(t0).size(), 2u);
  l.on_seen("A", t0 + 2100ms);
  auto s = l.sweep(t0 + 2100ms);
  EXPECT_EQ(s.struck_out, std::vector<std::string>{"A"});
  EXPECT_EQ(l.agent_count(), 0u);
  EXPECT_EQ(l.queued(), 2u);
}

TEST_F(JobLedgerTest, JobLostTooOftenIsAbandonedNotGivenAVerdict) {
  JobLedger l(opts());  // max_attempts = 2
  l.submit(job(7), need());
  for (int attempt = 0; attempt < 2; ++attempt) {
    hello(l, "A", 1, t0);
    ASSERT_EQ(l.assign(t0).size(), 1u);
    l.on_bye("A");
  }
  auto s = l.sweep(t0);
  ASSERT_EQ(s.abandoned.size(), 1u);
  EXPECT_EQ(s.abandoned[0].job_id, 7);
  EXPECT_EQ(s.abandoned[0].attempts, 2);
  EXPECT_NE(s.abandoned[0].reason.find("lost 2 times"), std::string::npos) << s.abandoned[0].reason;
  EXPECT_EQ(l.queued(), 0u);
  EXPECT_EQ(l.in_flight(), 0u);
}

TEST_F(JobLedgerTest, ReHelloMeansRestartSoHeldJobsAreRequeued) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1), need());
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  hello(l, "A", 1, t0 + 10ms);
  EXPECT_EQ(l.in_flight(), 0u);
  auto a = l.assign(t0 + 10ms);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].job_id, 1);
  EXPECT_NE(a[0].lease, first[0].lease);
  EXPECT_EQ(result(l, "A", answer(first[0])), RD::stale_lease) << "the old run's answer";
}

TEST_F(JobLedgerTest, SubmittingAJobInFlightTwiceIsRefused) {
  JobLedger l(opts());
  EXPECT_TRUE(l.submit(job(1), need()));
  EXPECT_FALSE(l.submit(job(1), need()));
  EXPECT_EQ(l.queued(), 1u);
}

TEST_F(JobLedgerTest, JobsGoOnlyToAgentsWhoseCapabilitiesMatch) {
  JobLedger l(opts());
  hello(l, "cpu", 4, t0, cpu_caps());
  hello(l, "tpu", 1, t0, tpu_caps());
  l.submit(job(1), need("tpu"));
  l.submit(job(2), need("tpu"));
  l.submit(job(3), need("interpret"));
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 2u);
  for (auto& x : a) EXPECT_EQ(x.peer, x.job_id == 3 ? "cpu" : "tpu") << x.job_id;
  EXPECT_EQ(l.queued(), 1u) << "job 2 waits for the one chip, not for a CPU slot";

  Requirement pinned = need("tpu");
  pinned.libtpu_version = "0.0.99";
  EXPECT_FALSE(l.has_agent_for(pinned));
  pinned.libtpu_version = "0.0.42.1";
  EXPECT_TRUE(l.has_agent_for(pinned));
  Requirement compile = need("interpret");
  compile.stages |= stage_bit(Stage::compile);
  EXPECT_FALSE(l.has_agent_for(compile)) << "the CPU agent has no libtpu compile";
}

TEST_F(JobLedgerTest, AnAgentThatJoinsLaterGetsQueuedWorkAtOnce) {
  JobLedger l(opts());
  for (int i = 1; i <= 3; ++i) l.submit(job(i), need());
  EXPECT_TRUE(l.assign(t0).empty());
  hello(l, "late", 3, t0 + 5s);
  EXPECT_EQ(l.assign(t0 + 5s).size(), 3u);
}

TEST_F(JobLedgerTest, HeartbeatsGoOnlyToAgentsNothingWasSentTo) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  hello(l, "B", 1, t0);
  EXPECT_TRUE(l.due_heartbeats(t0 + 50ms).empty());
  l.submit(job(1), need());
  ASSERT_EQ(l.assign(t0 + 60ms).size(), 1u);  // one of them got a job at 60 ms
  auto due = l.due_heartbeats(t0 + 100ms);
  ASSERT_EQ(due.size(), 1u) << "the other one";
  EXPECT_TRUE(l.due_heartbeats(t0 + 120ms).empty());
  EXPECT_EQ(l.due_heartbeats(t0 + 160ms).size(), 1u) << "the one that got the job, 100 ms on";
}

TEST_F(JobLedgerTest, TheHeartbeatIntervalStretchesWithTheFleet) {
  JobLedger::Options o = opts();
  o.heartbeat_rate = 100;  // heartbeats per second for the whole fleet
  JobLedger l(o);
  for (int i = 0; i < 10; ++i) hello(l, "a" + std::to_string(i), 1, t0);
  EXPECT_EQ(l.heartbeat_interval(), 100ms);
  EXPECT_FALSE(l.take_interval_broadcast());
  for (int i = 10; i < 100; ++i) hello(l, "a" + std::to_string(i), 1, t0);
  EXPECT_EQ(l.heartbeat_interval(), 1000ms) << "100 agents at 100 beats/s";
  EXPECT_TRUE(l.take_interval_broadcast());
  EXPECT_FALSE(l.take_interval_broadcast()) << "once per doubling";
  // Death detection follows the longer interval: 3 x 1 s.
  EXPECT_TRUE(l.sweep(t0 + 2500ms).dead_agents.empty());
  EXPECT_EQ(l.sweep(t0 + 3100ms).dead_agents.size(), 100u);
}

TEST_F(JobLedgerTest, TheIntervalFollowsLongEvaluationsSoBusyAgentsNeedNoHeartbeat) {
  JobLedger::Options o = opts();
  o.prefetch = 1;
  o.eval_heartbeat_max = 10s;
  JobLedger l(o);
  hello(l, "A", 1, t0);
  for (int id = 1; id <= 4; ++id) l.submit(job(id, 60), need());
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 2u) << "one to run, one prefetched";
  // The first took 2 s; the prefetched one waited behind it and then took 2 s too.
  ASSERT_EQ(l.on_result("A", answer(a[0]), nullptr, t0 + 2s), RD::accepted);
  EXPECT_EQ(l.heartbeat_interval(), 3000ms) << "1.5 x the evaluation";
  auto b = l.assign(t0 + 2s);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(l.on_result("A", answer(a[1]), nullptr, t0 + 4s), RD::accepted);
  EXPECT_EQ(l.heartbeat_interval(), 3000ms) << "the wait behind the first job does not count";
  EXPECT_TRUE(l.take_interval_broadcast()) << "the agents learn it";
  auto c = l.assign(t0 + 4s);
  ASSERT_EQ(c.size(), 1u);
  // A busy agent gets a job every 2 s, more often than the interval: no heartbeat is due.
  EXPECT_TRUE(l.due_heartbeats(t0 + 4s + 2900ms).empty());
  EXPECT_EQ(l.due_heartbeats(t0 + 4s + 3000ms).size(), 1u) << "silent for one interval";
  // Death now takes liveness (3) x 3 s.
  l.on_seen("A", t0 + 4s);
  EXPECT_TRUE(l.sweep(t0 + 12s).dead_agents.empty());
  EXPECT_EQ(l.sweep(t0 + 13100ms).dead_agents.size(), 1u);
}

TEST_F(JobLedgerTest, TheEvaluationStretchIsCappedAndCanBeTurnedOff) {
  for (auto cap : {100ms, 5000ms}) {
    JobLedger::Options o = opts();
    o.eval_heartbeat_max = cap;
    JobLedger l(o);
    hello(l, "A", 1, t0);
    l.submit(job(1, 600), need());
    auto a = l.assign(t0);
    ASSERT_EQ(l.on_result("A", answer(a[0]), nullptr, t0 + 60s), RD::accepted);
    EXPECT_EQ(l.heartbeat_interval(), cap) << "a 60 s evaluation, cap " << cap.count() << " ms";
    EXPECT_EQ(l.typical_eval(), 60s) << "measured whatever the cap (the bridge's batch window)";
  }
}

TEST_F(JobLedgerTest, TheTypicalEvaluationIsAMovingAverageOfTheTimePerResult) {
  JobLedger l(opts());
  EXPECT_EQ(l.typical_eval(), 0us) << "nothing measured before the first result";
  hello(l, "A", 1, t0);
  TP now = t0;
  for (int id = 1; id <= 40; ++id) {
    l.submit(job(id, 60), need());
    auto a = l.assign(now);
    ASSERT_EQ(a.size(), 1u);
    now += id == 1 ? 1000ms : 200ms;
    ASSERT_EQ(l.on_result("A", answer(a[0]), nullptr, now), RD::accepted);
  }
  // 1 s first, then 39 results of 200 ms: the average has moved most of the way to 200 ms.
  EXPECT_GT(l.typical_eval(), 200ms);
  EXPECT_LT(l.typical_eval(), 320ms);
}


// A result check (actors/result_check.hpp) goes first, and never to the agent it checks, even
// when that agent is the only one idle; requeued, it still avoids it.
TEST_F(JobLedgerTest, ACheckJumpsTheQueueAndNeverGoesToAnAvoidedAgent) {
  JobLedger l(opts());
  hello(l, "A", 1, t0);
  l.submit(job(1), need());
  l.submit_check(job(2), need(), {"A"});
  auto first = l.assign(t0);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].job_id, 1) << "A may not take the check, so it takes the ordinary job";
  EXPECT_EQ(l.queued(), 1u);
  EXPECT_TRUE(l.has_agent_for(need()));
  EXPECT_FALSE(l.has_agent_for(need(), {"A"})) << "only A could run it";
  ASSERT_EQ(result(l, "A", answer(first[0])), RD::accepted);
  EXPECT_TRUE(l.assign(t0).empty()) << "A is idle, but the check avoids it";
  hello(l, "B", 1, t0);
  EXPECT_TRUE(l.has_agent_for(need(), {"A"}));
  l.submit(job(3), need());
  auto second = l.assign(t0);
  ASSERT_EQ(second.size(), 2u);
  std::map<int64_t, std::string> to;
  for (auto& x : second) to[x.job_id] = x.peer;
  EXPECT_EQ(to[2], "B");
  EXPECT_EQ(to[3], "A");
  // B leaves mid-check: the check is requeued and still avoids A.
  l.on_bye("B");
  EXPECT_EQ(l.queued(), 1u);
  ASSERT_EQ(result(l, "A", answer(second[0].job_id == 3 ? second[0] : second[1])), RD::accepted);
  EXPECT_TRUE(l.assign(t0).empty());
  EXPECT_TRUE(l.cancel(2)) << "the dispatcher withdraws a check no agent can take";
  EXPECT_EQ(l.queued(), 0u);
  EXPECT_FALSE(l.cancel(2));
}

// A quarantined agent is removed: its leases go back to the queue for the others.
TEST_F(JobLedgerTest, RemovingAnAgentRequeuesItsLeases) {
  JobLedger l(opts());
  hello(l, "F", 1, t0);
  l.submit(job(1), need());
  auto a = l.assign(t0);
  ASSERT_EQ(a.size(), 1u);
  l.remove("F", "quarantined");
  EXPECT_FALSE(l.known("F"));
  EXPECT_EQ(l.queued(), 1u);
  EXPECT_EQ(result(l, "F", answer(a[0])), RD::stale_lease) << "its result is no longer heard";
  hello(l, "H", 1, t0);
  auto b = l.assign(t0);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].peer, "H");
}

}  // namespace
}  // namespace palladium
