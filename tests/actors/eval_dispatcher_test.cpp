// The dispatcher on the deterministic fixture (tests/actors/deterministic_fixture.hpp): agents
// are SimAgents whose frames go in as the bridge's messages and whose jobs come out of a
// RecordingSink, time moves only when a test advances it, and nothing sleeps. Jobs reach
// agents, results reach the requester, garbage frames are dropped, a silent agent's job is
// finished by another agent, only the lease holder is heard, HELLOs are validated, capability
// matching and the CPU -> TPU cascade, result checks and quarantine.
// Over a real ROUTER socket with DEALERs playing agents: CURVE admission end to end, and the
// bridge's own batching and routing.
#include "actors/eval_dispatcher.hpp"

#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "protocol/curve_keys.hpp"
#include "tests/actors/deterministic_fixture.hpp"
#include "tests/actors/fake_agent.hpp"
#include "tests/actors/recording_sink.hpp"
#include "tests/actors/sim_agent.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using testing::FakeAgent;
using testing::RecordingSink;
using testing::SimAgent;

wire::Job make_job(int64_t id) {
  wire::Job j;
  j.job_id = id;
  j.workload_id = "8p";
  j.code = "code of " + std::to_string(id);  // what tells the jobs apart at an agent
  j.check_level = "full";
  j.timeout_s = 30;
  j.seeds = {0, 1};
  return j;
}

wire::Result answer(const wire::Job& j, const std::string& agent,
                    Verdict verdict = Verdict::correct) {
  wire::Result r;
  r.job_id = j.job_id;
  r.lease = j.lease;
  r.agent_id = agent;
  r.evaluation.verdict = verdict;
  r.evaluation.kernel_ms = 2.0;
  return r;
}

class DispatcherTest : public testing::DeterministicFixture {
 protected:
  // A dispatcher over a fresh RecordingSink (CURVE-like when `authenticated`: peers are keys).
  void start(DispatcherOptions o = {}, bool authenticated = false) {
    sink = std::make_shared<RecordingSink>(authenticated);
    dispatcher = track(spawn_eval_dispatcher(sys, sink, o));
    run();
  }
  SimAgent agent(const std::string& peer) {
    return SimAgent(sys, dispatcher, *sink, peer, [this] { run(); });
  }
  DispatcherStats stats() {
    auto reply = ask<DispatcherStats>(dispatcher, stats_atom::value);
    run();
    EXPECT_TRUE(reply->value) << "the dispatcher answers stats";
    return reply->value.value_or(DispatcherStats{});
  }
  std::shared_ptr<Reply<Evaluated>> request_eval(const wire::Job& job) {
    return ask<Evaluated>(dispatcher, eval_atom::value, job);
  }
  // The answers a batch's sender got, by job id.
  static std::map<int64_t, std::vector<EvalAnswer>> by_id(std::vector<EvalAnswers>& got) {
    std::map<int64_t, std::vector<EvalAnswer>> out;
    for (auto& batch : got)
      for (auto& a : batch.answers) out[a.job_id].push_back(std::move(a));
    got.clear();
    return out;
  }
  std::shared_ptr<RecordingSink> sink;
  EvalDispatcherActor dispatcher;
};

TEST_F(DispatcherTest, JobGoesToAgentAndResultComesBack) {
  start();
  auto agent_a = agent("A");
  agent_a.hello(1);
  auto pending = request_eval(make_job(42));
  auto job = agent_a.next_job();
  ASSERT_TRUE(job);
  EXPECT_NE(job->job_id, 42) << "the agent sees the dispatcher's ticket, not the requester's id";
  EXPECT_EQ(job->code, "code of 42");
  EXPECT_GT(job->lease, 0);
  EXPECT_EQ(agent_a.interval_ms, 500) << "the welcome heartbeat names the interval";
  agent_a.send_raw("\xc1 not msgpack");  // dropped, not fatal
  agent_a.send(answer(*job, "A"));
  agent_a.send(answer(*job, "A"));  // duplicate: ignored
  run();
  ASSERT_TRUE(pending->value);
  const Evaluated& got = *pending->value;
  EXPECT_EQ(got.evaluation.verdict, Verdict::correct);
  EXPECT_EQ(got.evaluation.kernel_ms, 2.0);
  EXPECT_EQ(got.agent.dispatches, 1);
  // The agent facts are the admitted HELLO's, for the stored evaluation.
  EXPECT_EQ(got.agent.agent_id, "A");
  EXPECT_EQ(got.agent.backend, "interpret");
  EXPECT_EQ(got.agent.device_kind, "cpu");
  EXPECT_EQ(got.agent.jax_version, "0.10.2");
  EXPECT_EQ(got.agent.libtpu_version, "0.0.42.1");
  EXPECT_EQ(got.agent.agent_key, "") << "a plaintext link has no key";
  // Still serving after the garbage frame.
  auto second_pending = request_eval(make_job(43));
  auto second = agent_a.next_job();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->code, "code of 43");
  EXPECT_GT(second->job_id, job->job_id) << "a fresh ticket";
  agent_a.send(answer(*second, "A"));
  run();
  EXPECT_TRUE(second_pending->value);
  EXPECT_EQ(stats().refused_results, 1) << "the duplicate result";
}

// The batched form: each job of an EvalBatch gets one EvalAnswer, in EvalAnswers messages to
// the sender, and a job id already in flight is answered with already_exists, not evaluated
// a second time.
TEST_F(DispatcherTest, BatchedJobsGetOneAnswerEach) {
  start();
  auto agent_a = agent("A");
  agent_a.hello(2);
  auto [requester, got] = collect<evaluated_atom, EvalAnswers>();
  caf::send_as(requester, dispatcher, eval_atom::value,
               EvalBatch{{make_job(1), make_job(2), make_job(1)}});
  run();
  auto at_once = by_id(*got);
  ASSERT_EQ(at_once.size(), 1u);
  ASSERT_EQ(at_once[1].size(), 1u) << "the duplicate is answered at once";
  EXPECT_EQ(errc_of(at_once[1][0].error), Errc::already_exists);
  auto first = agent_a.next_job();
  auto second = agent_a.next_job();
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->job_id, second->job_id);
  agent_a.send(answer(*first, "A"));
  agent_a.send(answer(*second, "A"));
  agent_a.send(answer(*second, "A"));  // a duplicate frame is not a second answer
  run();
  auto answered = by_id(*got);
  ASSERT_EQ(answered.size(), 2u);
  for (int64_t id : {int64_t{1}, int64_t{2}}) {
    ASSERT_EQ(answered[id].size(), 1u) << "job " << id;
    EXPECT_FALSE(answered[id][0].error);
    EXPECT_EQ(answered[id][0].job_id, id);
    EXPECT_EQ(answered[id][0].evaluated.agent.dispatches, 1);
    EXPECT_EQ(answered[id][0].evaluated.agent.device_kind, "cpu");
  }
}

// Issue 20: the dispatcher issues its own tickets. Two requesters (two runs' searches, each
// with its own store) may both ask for their job 1: both are evaluated and both answered, each
// with its own id, while one requester's second job 1 is still a duplicate.
TEST_F(DispatcherTest, TwoRequestersWithTheSameJobIdAreBothAnswered) {
  start();
  auto agent_a = agent("A");
  agent_a.hello(2);
  auto [one, one_got] = collect<evaluated_atom, EvalAnswers>();
  auto [other, other_got] = collect<evaluated_atom, EvalAnswers>();
  auto job_with = [](const std::string& code) {
    wire::Job j = make_job(1);
    j.code = code;
    return j;
  };
  caf::send_as(one, dispatcher, eval_atom::value, EvalBatch{{job_with("one's")}});
  caf::send_as(other, dispatcher, eval_atom::value,
               EvalBatch{{job_with("other's"), job_with("again")}});
  std::map<std::string, wire::Job> at_agent;  // by code
  for (int i = 0; i < 2; ++i) {
    auto j = agent_a.next_job();
    ASSERT_TRUE(j);
    at_agent[j->code] = *j;
  }
  ASSERT_EQ(at_agent.count("one's") + at_agent.count("other's"), 2u);
  EXPECT_NE(at_agent["one's"].job_id, at_agent["other's"].job_id) << "two tickets";
  EXPECT_FALSE(agent_a.next_job()) << "the other's second job 1 was not dispatched";
  agent_a.send(answer(at_agent["one's"], "A", Verdict::numerics_mismatch));
  agent_a.send(answer(at_agent["other's"], "A", Verdict::correct));
  run();
  auto mine = by_id(*one_got);
  ASSERT_EQ(mine.size(), 1u);
  ASSERT_EQ(mine[1].size(), 1u);
  EXPECT_FALSE(mine[1][0].error);
  EXPECT_EQ(mine[1][0].evaluated.evaluation.verdict, Verdict::numerics_mismatch);
  auto theirs = by_id(*other_got);
  ASSERT_EQ(theirs.size(), 1u) << "both answers carry their job id, 1";
  ASSERT_EQ(theirs[1].size(), 2u);
  int answered = 0, refused = 0;
  for (const auto& a : theirs[1]) {
    if (a.error) {
      EXPECT_EQ(errc_of(a.error), Errc::already_exists);
      ++refused;
    } else {
      EXPECT_EQ(a.evaluated.evaluation.verdict, Verdict::correct);
      ++answered;
    }
  }
  EXPECT_EQ(answered, 1);
  EXPECT_EQ(refused, 1);
}

// Agents' frames are urgent: a HELLO that arrives behind a flood of eval requests (and behind
// a stats request sent after the flood) is handled before them, not after.
TEST_F(DispatcherTest, AgentsFramesOvertakeABurstOfEvalRequests) {
  start();
  auto agent_a = agent("A");
  for (int64_t id = 1; id <= 5000; ++id)
    caf::anon_send(dispatcher, eval_atom::value, make_job(id));
  bool asked = false;
  bool welcomed_before_stats = false;
  track(sys.spawn([&, d = dispatcher](caf::event_based_actor* self) {
    self->request(d, 3600s, stats_atom::value)
        .then([&](DispatcherStats&) { welcomed_before_stats = sink->waiting("A") > 0; },
              [](caf::error&) {});
    asked = true;
  }));
  while (!asked) sched.run_once();  // the stats request is queued behind the flood
  agent_a.hello(1);
  run();
  (void)agent_a.next();
  ASSERT_EQ(agent_a.interval_ms, 500) << "welcomed";
  EXPECT_TRUE(welcomed_before_stats)
      << "the HELLO was handled before the requests and the stats request queued ahead of it";
}

TEST_F(DispatcherTest, SilentAgentsJobIsRequeuedToAnotherAgent) {
  DispatcherOptions o;
  o.ledger.heartbeat = 50ms;
  o.ledger.liveness = 3;
  start(o);
  auto agent_a = agent("A");
  agent_a.hello(1);
  run();  // A registers before B, so A gets the job
  auto pending = request_eval(make_job(7));
  auto first = agent_a.next_job();
  ASSERT_TRUE(first);
  auto agent_b = agent("B");
  agent_b.hello(1);
  // B stays alive, A says nothing more: after 150 ms A is dead and B gets job 7.
  std::optional<wire::Job> requeued;
  int waited_ms = 0;
  for (; waited_ms < 1000 && !requeued; waited_ms += 30) {
    agent_b.heartbeat();
    advance(30ms, 10ms);
    requeued = agent_b.next_job();
  }
  ASSERT_TRUE(requeued);
  EXPECT_GE(waited_ms, 150) << "not before A missed its heartbeats";
  EXPECT_EQ(requeued->job_id, first->job_id) << "the same ticket, requeued";
  agent_a.send(answer(*first, "A"));  // A's late answer is deduplicated by its lease
  agent_b.send(answer(*requeued, "B"));
  run();
  ASSERT_TRUE(pending->value);
  EXPECT_EQ(pending->value->agent.agent_id, "B");
  EXPECT_EQ(pending->value->agent.dispatches, 2);
  EXPECT_EQ(stats().agents, 1) << "A was declared dead";
}

TEST_F(DispatcherTest, OnlyTheLeaseHolderCanPostAResult) {
  start();
  auto agent_a = agent("A");
  agent_a.hello(1);
  auto pending = request_eval(make_job(5));
  auto job = agent_a.next_job();
  ASSERT_TRUE(job);
  // A stranger with no HELLO, and a registered agent that does not hold the lease, both try
  // to post a `correct` with a 1000x speedup for job 5 under A's lease.
  auto stranger = agent("S");
  auto other = agent("O");
  other.hello(1);
  run();
  EXPECT_EQ(stats().agents, 2);
  wire::Result forged = answer(*job, "A");
  forged.evaluation.kernel_ms = 0.001;
  forged.evaluation.baseline_ms = 1.0;
  stranger.send(forged);
  other.send(forged);
  run();
  EXPECT_EQ(stats().refused_results, 2);
  EXPECT_FALSE(pending->answered()) << "nothing was delivered";
  agent_a.send(answer(*job, "A", Verdict::numerics_mismatch));
  run();
  ASSERT_TRUE(pending->value);
  EXPECT_EQ(pending->value->evaluation.verdict, Verdict::numerics_mismatch);
}

TEST_F(DispatcherTest, BadHellosAreRefusedWithAByeAndGetNoWork) {
  start();
  auto greedy = agent("G");
  greedy.send(FakeAgent::hello_frame("G", 2147483647));
  auto bye = greedy.next();
  ASSERT_TRUE(bye);
  ASSERT_TRUE(std::holds_alternative<wire::Bye>(*bye));
  EXPECT_NE(std::get<wire::Bye>(*bye).reason.find("slots 2147483647"), std::string::npos);
  auto odd = agent("O");
  wire::Hello h = FakeAgent::hello_frame("O", 1);
  h.stages.push_back("teleport");
  odd.send(h);
  auto bye2 = odd.next();
  ASSERT_TRUE(bye2 && std::holds_alternative<wire::Bye>(*bye2));
  EXPECT_NE(std::get<wire::Bye>(*bye2).reason.find("unknown stage \"teleport\""),
            std::string::npos);
  EXPECT_EQ(stats().agents, 0);
  EXPECT_EQ(stats().refused_hellos, 2);
}

TEST_F(DispatcherTest, AHelloFloodRegistersOnlyWhatTheBucketAllows) {
  DispatcherOptions o;
  o.admission.registration_burst = 20;
  o.admission.registrations_per_s = 1;
  start(o);
  for (int i = 0; i < 200; ++i) agent("f" + std::to_string(i)).hello(1);
  run();
  auto s = stats();
  EXPECT_LE(s.agents, 21);
  EXPECT_GE(s.refused_hellos, 179);
  EXPECT_EQ(s.agents + s.refused_hellos, 200) << "every HELLO was decided";
  // The bucket refills at 1/s: two seconds later two more get in.
  advance(2s, 100ms);
  for (int i = 0; i < 5; ++i) agent("late" + std::to_string(i)).hello(1);
  run();
  EXPECT_EQ(stats().agents, s.agents + 2);
}

TEST_F(DispatcherTest, JobsGoOnlyToAgentsOfTheTargetBackend) {
  DispatcherOptions o;
  o.target.backend = "tpu";
  start(o);
  auto tpu = agent("T");
  tpu.hello(1, "tpu");
  auto pending = request_eval(make_job(1));
  auto job = tpu.next_job();
  ASSERT_TRUE(job) << "no CPU agents: straight to the TPU";
  EXPECT_EQ(job->check_level, "full");
  tpu.send(answer(*job, "T"));
  run();
  ASSERT_TRUE(pending->value);

  DispatcherOptions cpu_only;  // target interpret: a TPU agent must not get the job
  start(cpu_only);
  auto wrong = agent("W");
  wrong.hello(1, "tpu");
  auto waiting = request_eval(make_job(2));
  EXPECT_FALSE(wrong.next_job()) << "wrong backend";
  auto right = agent("R");
  right.hello(1);
  auto j2 = right.next_job();
  ASSERT_TRUE(j2);
  right.send(answer(*j2, "R"));
  run();
  ASSERT_TRUE(waiting->value);
}

TEST_F(DispatcherTest, CascadeScreensOnCpuAgentsAndOnlySurvivorsReachTheChip) {
  DispatcherOptions o;
  o.target.backend = "tpu";
  start(o);
  auto cpu = agent("C");
  cpu.hello(2);
  auto tpu = agent("T");
  tpu.hello(1, "tpu");
  run();
  auto failing = request_eval(make_job(1));
  auto passing = request_eval(make_job(2));
  std::map<int64_t, wire::Job> screened;
  for (int i = 0; i < 2; ++i) {
    auto j = cpu.next_job();
    ASSERT_TRUE(j);
    EXPECT_EQ(j->check_level, "cpu_check");
    screened[j->code == "code of 1" ? 1 : 2] = *j;
  }
  ASSERT_EQ(screened.size(), 2u);
  cpu.send(answer(screened[1], "C", Verdict::lowering_error));
  cpu.send(answer(screened[2], "C", Verdict::correct));
  run();
  ASSERT_TRUE(failing->value);
  EXPECT_EQ(failing->value->evaluation.verdict, Verdict::lowering_error)
      << "failed on CPU: never took the chip";
  auto on_chip = tpu.next_job();
  ASSERT_TRUE(on_chip);
  EXPECT_EQ(on_chip->job_id, screened[2].job_id) << "the same ticket on both tiers";
  EXPECT_EQ(on_chip->check_level, "full");
  EXPECT_NE(on_chip->lease, screened[2].lease);
  wire::Result r = answer(*on_chip, "T");
  r.evaluation.timing_kind = TimingKind::tpu_profiler;
  tpu.send(r);
  run();
  ASSERT_TRUE(passing->value);
  EXPECT_EQ(passing->value->evaluation.timing_kind, TimingKind::tpu_profiler);
  EXPECT_EQ(passing->value->agent.dispatches, 2) << "CPU tier + TPU tier";
  EXPECT_EQ(passing->value->agent.backend, "tpu");
  EXPECT_FALSE(tpu.next_job()) << "job 1 never reached the TPU";
}

TEST_F(DispatcherTest, LostTooOftenIsARetryableErrorNotACrash) {
  DispatcherOptions o;
  o.ledger.max_attempts = 1;
  start(o);
  auto agent_a = agent("A");
  agent_a.hello(1);
  auto pending = request_eval(make_job(9));
  ASSERT_TRUE(agent_a.next_job());
  agent_a.send(wire::Bye{"A", "going away"});
  run();
  EXPECT_FALSE(pending->value);
  ASSERT_TRUE(pending->error);
  EXPECT_EQ(errc_of(pending->error), Errc::unavailable);
  EXPECT_TRUE(retryable(*errc_of(pending->error)));
}

// Issue 21 item 6: a stolen allowlisted key that answers `correct` for every lease. Alone, it
// cannot be checked, and its forgeries are answered, each naming its key. Once an honest agent
// joins, every result is checked by the other agent (share 1.0): the forger's `correct` meets
// the honest `numerics_mismatch`, its key is quarantined (BYE, no more leases, HELLO refused),
// and the honest failure is the answer.
TEST_F(DispatcherTest, AForgingKeyIsCaughtQuarantinedAndItsResultsNameIt) {
  keys::KeyPair honest = keys::generate(), forger = keys::generate();
  DispatcherOptions o;
  o.checks.share = 1.0;
  o.checks.seed = 7;
  o.ledger.liveness = 100;  // the agents do not heartbeat while the test's time moves
  start(o, /*authenticated=*/true);  // a peer is its key, as under CURVE
  auto f = agent(forger.public_key);
  f.hello(1);
  run();
  auto forge = [&](const wire::Job& j) {
    wire::Result r = answer(j, "forger");
    r.evaluation.kernel_ms = 1.0;
    r.evaluation.baseline_ms = 1.5;  // a modest 1.5x: nothing for the plausibility gate
    r.evaluation.timing_kind = TimingKind::cpu_wall;
    f.send(r);
  };
  std::vector<Evaluated> forged;
  for (int64_t id = 1; id <= 2; ++id) {
    auto pending = request_eval(make_job(id));
    auto j = f.next_job();
    ASSERT_TRUE(j);
    forge(*j);
    run();
    ASSERT_TRUE(pending->value);
    forged.push_back(*pending->value);
  }
  for (const auto& r : forged) {
    EXPECT_EQ(r.evaluation.verdict, Verdict::correct) << "no other agent: nothing could check it";
    EXPECT_EQ(r.agent.agent_key, forger.public_key) << "but it names the key that sent it";
    EXPECT_NE(r.checks.cross_check_json.find("unchecked"), std::string::npos)
        << r.checks.cross_check_json;
  }

  auto h = agent(honest.public_key);
  h.hello(1);
  run();
  std::vector<std::shared_ptr<Reply<Evaluated>>> pending;
  for (int64_t id = 3; id <= 6; ++id) pending.push_back(request_eval(make_job(id)));
  std::map<int64_t, std::vector<std::string>> seen_by;  // job id -> who got it
  bool forger_told = false;
  auto all_answered = [&] {
    for (auto& p : pending)
      if (!p->answered()) return false;
    return true;
  };
  auto forger_reads = [&] {
    while (auto m = f.next()) {
      if (auto* j = std::get_if<wire::Job>(&*m)) {
        seen_by[j->job_id].push_back("f");
        forge(*j);
      } else if (auto* bye = std::get_if<wire::Bye>(&*m)) {
        forger_told = bye->reason.find("quarantined") != std::string::npos;
      }
    }
  };
  for (int round = 0; round < 50 && !all_answered(); ++round) {
    forger_reads();
    while (auto j = h.next_job()) {
      seen_by[j->job_id].push_back("h");
      h.send(answer(*j, "honest", Verdict::numerics_mismatch));
    }
    // A tick: it settles a check that no agent is left to take (the forger, quarantined).
    advance(100ms, 100ms);
  }
  ASSERT_TRUE(all_answered());
  forger_reads();  // what it was sent last
  for (auto& p : pending) {
    ASSERT_TRUE(p->value);
    EXPECT_EQ(p->value->evaluation.verdict, Verdict::numerics_mismatch)
        << "no forged correct after the check";
    EXPECT_EQ(p->value->agent.agent_key, honest.public_key);
  }
  EXPECT_TRUE(forger_told);
  bool checked_in_disguise = false;
  for (const auto& [id, who] : seen_by)
    if (who.size() == 2 && who[0] != who[1]) checked_in_disguise = true;
  EXPECT_TRUE(checked_in_disguise) << "a check is the same job id, sent to the other agent";

  auto caught_reply = ask<std::vector<Quarantine>>(dispatcher, quarantine_atom::value);
  run();
  ASSERT_TRUE(caught_reply->value);
  const auto& caught = *caught_reply->value;
  ASSERT_EQ(caught.size(), 1u);
  EXPECT_EQ(caught[0].agent_key, forger.public_key);
  EXPECT_EQ(caught[0].agent_id, "forger");
  EXPECT_NE(caught[0].reason.find("claimed correct"), std::string::npos) << caught[0].reason;
  EXPECT_EQ(stats().quarantined, 1);
  EXPECT_EQ(stats().agents, 1);

  // No more leases for the key, whatever it says.
  f.hello(1);
  auto refused = f.next();
  ASSERT_TRUE(refused && std::holds_alternative<wire::Bye>(*refused));
  EXPECT_NE(std::get<wire::Bye>(*refused).reason.find("quarantined"), std::string::npos);
  auto later = request_eval(make_job(9));
  EXPECT_FALSE(f.next_job());
  auto j = h.next_job();
  ASSERT_TRUE(j);
  h.send(answer(*j, "honest", Verdict::numerics_mismatch));
  run();
  EXPECT_TRUE(later->value);
}

// Issue 23 item 3 on the dispatcher: a `correct` whose speedup is above the ceiling is re-timed
// on another slot before it is answered; here the second timing does not hold, so it replaces
// the first, and both are kept.
TEST_F(DispatcherTest, ASuspectSpeedIsRetimedOnAnotherSlotBeforeItIsAnswered) {
  start();  // random checks off: only the gate asks again
  auto agent_a = agent("A");
  agent_a.hello(2);
  auto pending = request_eval(make_job(5));
  auto first = agent_a.next_job();
  ASSERT_TRUE(first);
  wire::Result r = answer(*first, "A");
  r.evaluation.kernel_ms = 0.01;
  r.evaluation.baseline_ms = 1.0;  // 100x
  r.evaluation.timing_kind = TimingKind::cpu_wall;
  agent_a.send(r);
  auto again = agent_a.next_job();
  ASSERT_TRUE(again) << "the only agent re-times it on its other slot";
  EXPECT_EQ(again->job_id, first->job_id);
  EXPECT_NE(again->lease, first->lease);
  EXPECT_FALSE(pending->answered()) << "not before the second timing";
  wire::Result r2 = answer(*again, "A");
  r2.evaluation.kernel_ms = 0.5;
  r2.evaluation.baseline_ms = 1.0;
  r2.evaluation.timing_kind = TimingKind::cpu_wall;
  agent_a.send(r2);
  run();
  ASSERT_TRUE(pending->value);
  EXPECT_EQ(pending->value->checks.plausibility, "retimed");
  EXPECT_EQ(pending->value->evaluation.kernel_ms, 0.5);
  EXPECT_NE(pending->value->checks.retiming_json.find("\"first\""), std::string::npos);
  EXPECT_EQ(pending->value->agent.dispatches, 2);
  EXPECT_EQ(stats().checks, 1);
  EXPECT_EQ(stats().quarantined, 0);
}

// The dispatcher stops its sink (the bridge, in production) when it terminates.
TEST_F(DispatcherTest, TheSinkIsStoppedWithTheDispatcher) {
  start();
  EXPECT_FALSE(sink->stopped);
  caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
  run();
  EXPECT_TRUE(sink->stopped);
}

// -- over TCP ---------------------------------------------------------------------------------

// The production wiring: the dispatcher over a real ZmqBridge and a real scheduler, with DEALER
// sockets playing agents.
class DispatcherOverTcpTest : public ::testing::Test {
 protected:
  DispatcherOverTcpTest() : sys(make_cfg()) {}
  static caf::actor_system_config& make_cfg() {
    static caf::actor_system_config cfg;
    cfg.set("scheduler.max-threads", 2);
    register_error_category(cfg);
    return cfg;
  }
  void TearDown() override {
    caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
    sys.await_all_actors_done();
  }
  void start(DispatcherOptions o = {}, ZmqBridgeOptions b = {}) {
    if (b.endpoint.empty()) b.endpoint = "tcp://127.0.0.1:0";
    bridge = std::make_shared<ZmqBridge>(b);
    dispatcher = spawn_eval_dispatcher(sys, bridge, o);
  }
  DispatcherStats stats() {
    caf::scoped_actor self{sys};
    DispatcherStats s;
    self->request(dispatcher, 20s, stats_atom::value)
        .receive([&](DispatcherStats& got) { s = got; }, [](caf::error&) {});
    return s;
  }
  // Waits until the dispatcher has `n` agents (registration is asynchronous).
  void await_agents(int n) {
    for (int i = 0; i < 250 && stats().agents != n; ++i) std::this_thread::sleep_for(20ms);
    ASSERT_EQ(stats().agents, n);
  }
  caf::actor_system sys;
  std::shared_ptr<ZmqBridge> bridge;
  EvalDispatcherActor dispatcher;
  zmq::context_t ctx;
};

struct Answer {
  std::optional<Evaluated> result;
  std::optional<Errc> error;
};

// Sends `job` to the dispatcher from a scoped actor on another thread and returns a future of
// the answer (a blocking request must not stall the fake agents driven by the test thread).
std::future<Answer> request_eval(caf::actor_system& sys, EvalDispatcherActor d, wire::Job job) {
  return std::async(std::launch::async, [&sys, d, job] {
    caf::scoped_actor self{sys};
    Answer got;
    self->request(d, std::chrono::seconds(20), eval_atom::value, job)
        .receive([&](Evaluated& r) { got.result = r; },
                 [&](caf::error& e) { got.error = errc_of(e); });
    return got;
  });
}

TEST_F(DispatcherOverTcpTest, CurveAdmitsOnlyAllowedKeysAndTheKeyIsTheIdentity) {
  keys::KeyPair server = keys::generate(), good = keys::generate(), bad = keys::generate();
  ZmqBridgeOptions b;
  b.endpoint = "tcp://127.0.0.1:0";
  b.curve_secret_key = server.secret_key;
  start({}, b);
  bridge->allow(good.public_key);
  ASSERT_TRUE(bridge->authenticated());
  EXPECT_EQ(bridge->public_key(), server.public_key);
  FakeAgent intruder(ctx, bridge->endpoint(), "i", server.public_key, bad);
  intruder.hello(4);
  FakeAgent plain(ctx, bridge->endpoint(), "p");  // no CURVE at all
  plain.hello(4);
  FakeAgent agent(ctx, bridge->endpoint(), "whatever-routing-id", server.public_key, good);
  agent.hello(1);
  await_agents(1);
  auto pending = request_eval(sys, dispatcher, make_job(3));
  auto job = agent.next_job(5s);
  ASSERT_TRUE(job);
  agent.send(answer(*job, "me"));
  auto got = pending.get();
  ASSERT_TRUE(got.result);
  // The stored evaluation names the agent by its key, never by the name it chose.
  EXPECT_EQ(got.result->agent.agent_key, good.public_key);
  EXPECT_EQ(got.result->agent.agent_id, "me");
  EXPECT_GE(bridge->stats().auth_refused, 1u);
  EXPECT_EQ(stats().agents, 1);
}

TEST(BatchWindowTest, FollowsTheTypicalEvaluationUpToTheCapAndNoneForShortOnes) {
  using std::chrono::microseconds;
  EXPECT_EQ(batch_window_for(200ms, 2000us), 1000us) << "1/200 of a 200 ms evaluation";
  EXPECT_EQ(batch_window_for(2500ms, 2000us), 2000us) << "capped";
  EXPECT_EQ(batch_window_for(10ms, 2000us), 0us) << "under 100 us: no batching";
  EXPECT_EQ(batch_window_for(0us, 2000us), 0us) << "nothing measured yet";
  EXPECT_EQ(batch_window_for(2500ms, 0us), 0us) << "a cap of 0 turns it off";
}

// With a batch window, frames that arrive while the bridge pauses are handed over together,
// in order, and none is lost; sends queued meanwhile go out on the next turn.
TEST(ZmqBridgeTest, ABatchWindowHandsOverABurstInFewBatchesInOrder) {
  ZmqBridge bridge(std::string("tcp://127.0.0.1:0"));
  bridge.set_batch_window(200ms);
  std::mutex m;
  std::vector<size_t> batches;
  std::vector<std::string> got;
  bridge.start([&](std::vector<InboundFrame> frames) {
    std::lock_guard<std::mutex> g(m);
    batches.push_back(frames.size());
    for (auto& f : frames) got.push_back(std::string(f.payload.view()));
  });
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::routing_id, "D");
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(bridge.endpoint());
  for (int i = 0; i < 20; ++i) {
    std::string s = std::to_string(i);
    dealer.send(zmq::buffer(s), zmq::send_flags::none);
    std::this_thread::sleep_for(1ms);
  }
  for (int i = 0; i < 300; ++i) {
    {
      std::lock_guard<std::mutex> g(m);
      if (got.size() == 20) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  {
    std::lock_guard<std::mutex> g(m);
    ASSERT_EQ(got.size(), 20u);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], std::to_string(i));
    // 20 frames over ~20 ms against a 200 ms window: a first turn, then (nearly) all the rest.
    EXPECT_LE(batches.size(), 4u);
  }
  bridge.send("D", "back");
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, 2000ms);
  ASSERT_TRUE(item.revents & ZMQ_POLLIN) << "a send during the pause goes out on the next turn";
  zmq::message_t msg;
  (void)dealer.recv(msg);
  EXPECT_EQ(msg.to_string(), "back");
  EXPECT_GE(bridge.stats().busy_turns, 2u);
  bridge.stop();
}

// Under CURVE a frame's peer is its key, whatever the routing id, and what is sent to a key
// goes to the connection its latest frame came on (the bridge caches routing ids per
// connection: that must not change either).
TEST(ZmqBridgeTest, UnderCurveAKeysFramesGoToTheConnectionItLastSpokeOn) {
  keys::KeyPair server = keys::generate(), a = keys::generate(), b = keys::generate();
  ZmqBridgeOptions options;
  options.endpoint = "tcp://127.0.0.1:0";
  options.curve_secret_key = server.secret_key;
  ZmqBridge bridge(options);
  bridge.allow(a.public_key);
  bridge.allow(b.public_key);
  std::mutex m;
  std::vector<std::pair<std::string, std::string>> got;  // (peer, payload)
  bridge.start([&](std::vector<InboundFrame> frames) {
    std::lock_guard<std::mutex> g(m);
    for (auto& f : frames) got.emplace_back(f.peer, std::string(f.payload.view()));
  });
  zmq::context_t ctx;
  auto dealer = [&](const keys::KeyPair& pair, const std::string& routing_id) {
    auto s = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
    s->set(zmq::sockopt::routing_id, routing_id);
    s->set(zmq::sockopt::linger, 0);
    s->set(zmq::sockopt::curve_serverkey, server.public_key);
    s->set(zmq::sockopt::curve_publickey, pair.public_key);
    s->set(zmq::sockopt::curve_secretkey, pair.secret_key);
    s->connect(bridge.endpoint());
    return s;
  };
  auto say = [&](zmq::socket_t& s, const std::string& text, const std::string& key) {
    s.send(zmq::buffer(text), zmq::send_flags::none);
    for (int i = 0; i < 300; ++i) {
      {
        std::lock_guard<std::mutex> g(m);
        if (!got.empty() && got.back().second == text) {
          EXPECT_EQ(got.back().first, key) << text;
          return;
        }
      }
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "the bridge did not get " << text;
  };
  auto hears = [&](zmq::socket_t& s, const std::string& text) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 2000ms);
    if (!(item.revents & ZMQ_POLLIN)) return false;
    zmq::message_t msg;
    (void)s.recv(msg);
    return msg.to_string() == text;
  };
  auto a1 = dealer(a, "a1");
  auto b1 = dealer(b, "b1");
  say(*a1, "1", a.public_key);
  say(*b1, "2", b.public_key);
  bridge.send(a.public_key, "to a");
  EXPECT_TRUE(hears(*a1, "to a"));
  bridge.send(b.public_key, "to b");
  EXPECT_TRUE(hears(*b1, "to b"));
  auto a2 = dealer(a, "a2");  // the same key on a second connection
  say(*a2, "3", a.public_key);
  bridge.send(a.public_key, "to a2");
  EXPECT_TRUE(hears(*a2, "to a2"));
  say(*a1, "4", a.public_key);  // and back on the first
  bridge.send(a.public_key, "to a1");
  EXPECT_TRUE(hears(*a1, "to a1"));
  bridge.send(b.public_key, "to b again");
  EXPECT_TRUE(hears(*b1, "to b again"));
  bridge.stop();
}

TEST(ZmqBridgeTest, PlaintextBeyondLoopbackNeedsTheExplicitFlag) {
  ZmqBridgeOptions b;
  b.endpoint = "tcp://0.0.0.0:0";
  try {
    ZmqBridge bridge(b);
    FAIL() << "plaintext on 0.0.0.0 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("insecure"), std::string::npos) << e.what();
  }
  b.insecure_plaintext = true;
  ZmqBridge bridge(b);
  EXPECT_FALSE(bridge.authenticated());
}

}  // namespace
}  // namespace palladium
