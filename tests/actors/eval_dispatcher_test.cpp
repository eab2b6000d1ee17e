// The dispatcher over a real ROUTER socket, with test DEALER sockets playing agents (and
// playing attackers): jobs reach agents, results reach the requester, garbage frames are
// dropped, a silent agent's job is finished by another agent, only the lease holder is heard,
// HELLOs are validated, capability matching and the CPU -> TPU cascade, and CURVE.
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
#include "tests/actors/fake_agent.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using testing::FakeAgent;

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

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() : sys(make_cfg()) {}
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
    self->request(dispatcher, caf::infinite, stats_atom::value)
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

TEST_F(DispatcherTest, JobGoesToAgentAndResultComesBack) {
  start();
  FakeAgent agent(ctx, bridge->endpoint(), "A");
  agent.hello(1);
  auto pending = request_eval(sys, dispatcher, make_job(42));
  auto job = agent.next_job(5s);
  ASSERT_TRUE(job);
  EXPECT_NE(job->job_id, 42) << "the agent sees the dispatcher's ticket, not the requester's id";
  EXPECT_EQ(job->code, "code of 42");
  EXPECT_GT(job->lease, 0);
  EXPECT_EQ(agent.interval_ms, 500) << "the welcome heartbeat names the interval";
  agent.send_raw("\xc1 not msgpack");  // dropped, not fatal
  agent.send(answer(*job, "A"));
  agent.send(answer(*job, "A"));  // duplicate: ignored
  auto got = pending.get();
  ASSERT_TRUE(got.result);
  EXPECT_EQ(got.result->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(got.result->evaluation.kernel_ms, 2.0);
  EXPECT_EQ(got.result->agent.dispatches, 1);
  // The agent facts are the admitted HELLO's, for the stored evaluation.
  EXPECT_EQ(got.result->agent.agent_id, "A");
  EXPECT_EQ(got.result->agent.backend, "interpret");
  EXPECT_EQ(got.result->agent.device_kind, "cpu");
  EXPECT_EQ(got.result->agent.jax_version, "0.10.2");
  EXPECT_EQ(got.result->agent.libtpu_version, "0.0.42.1");
  EXPECT_EQ(got.result->agent.agent_key, "") << "a plaintext link has no key";
  // Still serving after the garbage frame.
  auto second_pending = request_eval(sys, dispatcher, make_job(43));
  auto second = agent.next_job(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->code, "code of 43");
  EXPECT_GT(second->job_id, job->job_id) << "a fresh ticket";
  agent.send(answer(*second, "A"));
  EXPECT_TRUE(second_pending.get().result);
}

// The batched form: each job of an EvalBatch gets one EvalAnswer, in EvalAnswers messages to
// the sender, and a job id already in flight is answered with already_exists, not evaluated
// a second time.
TEST_F(DispatcherTest, BatchedJobsGetOneAnswerEach) {
  start();
  FakeAgent agent(ctx, bridge->endpoint(), "A");
  agent.hello(2);
  await_agents(1);
  caf::scoped_actor self{sys};
  EvalBatch batch;
  batch.jobs = {make_job(1), make_job(2), make_job(1)};
  self->send(dispatcher, eval_atom::value, std::move(batch));
  std::map<int64_t, std::vector<EvalAnswer>> got;
  auto collect = [&] {
    self->receive(
        [&](evaluated_atom, EvalAnswers& answers) {
          for (auto& a : answers.answers) got[a.job_id].push_back(std::move(a));
        },
        caf::after(5s) >> [] {});
  };
  collect();
  ASSERT_EQ(got[1].size(), 1u) << "the duplicate is answered at once";
  EXPECT_EQ(errc_of(got[1][0].error), Errc::already_exists);
  got.clear();
  auto first = agent.next_job(5s);
  auto second = agent.next_job(5s);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->job_id, second->job_id);
  agent.send(answer(*first, "A"));
  agent.send(answer(*second, "A"));
  agent.send(answer(*second, "A"));  // a duplicate frame is not a second answer
  while (got.size() < 2) {
    size_t before = got.size();
    collect();
    if (got.size() == before) break;
  }
  self->receive([&](evaluated_atom, EvalAnswers&) { ADD_FAILURE() << "a second answer"; },
                caf::after(300ms) >> [] {});
  for (int64_t id : {int64_t{1}, int64_t{2}}) {
    ASSERT_EQ(got[id].size(), 1u) << "job " << id;
    EXPECT_FALSE(got[id][0].error);
    EXPECT_EQ(got[id][0].job_id, id);
    EXPECT_EQ(got[id][0].evaluated.agent.dispatches, 1);
    EXPECT_EQ(got[id][0].evaluated.agent.device_kind, "cpu");
  }
}

// Issue 20: the dispatcher issues its own tickets. Two requesters (two runs' searches, each
// with its own store) may both ask for their job 1: both are evaluated and both answered, each
// with its own id, while one requester's second job 1 is still a duplicate.
TEST_F(DispatcherTest, TwoRequestersWithTheSameJobIdAreBothAnswered) {
  start();
  FakeAgent agent(ctx, bridge->endpoint(), "A");
  agent.hello(2);
  await_agents(1);
  caf::scoped_actor one{sys}, other{sys};
  auto job_with = [](const std::string& code) {
    wire::Job j = make_job(1);
    j.code = code;
    return j;
  };
  one->send(dispatcher, eval_atom::value, EvalBatch{{job_with("one's")}});
  other->send(dispatcher, eval_atom::value, EvalBatch{{job_with("other's"), job_with("again")}});
  std::map<std::string, wire::Job> at_agent;  // by code
  for (int i = 0; i < 2; ++i) {
    auto j = agent.next_job(5s);
    ASSERT_TRUE(j);
    at_agent[j->code] = *j;
  }
  ASSERT_EQ(at_agent.count("one's") + at_agent.count("other's"), 2u);
  EXPECT_NE(at_agent["one's"].job_id, at_agent["other's"].job_id) << "two tickets";
  EXPECT_FALSE(agent.next_job(200ms)) << "the other's second job 1 was not dispatched";
  wire::Result verdict_one = answer(at_agent["one's"], "A", Verdict::numerics_mismatch);
  agent.send(verdict_one);
  agent.send(answer(at_agent["other's"], "A", Verdict::correct));
  auto answers_of = [](caf::scoped_actor& self, size_t want) {
    std::vector<EvalAnswer> got;
    while (got.size() < want) {
      bool any = false;
      self->receive(
          [&](evaluated_atom, EvalAnswers& a) {
            any = true;
            for (auto& x : a.answers) got.push_back(std::move(x));
          },
          caf::after(5s) >> [] {});
      if (!any) break;
    }
    return got;
  };
  auto mine = answers_of(one, 1);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].job_id, 1);
  EXPECT_FALSE(mine[0].error);
  EXPECT_EQ(mine[0].evaluated.evaluation.verdict, Verdict::numerics_mismatch);
  auto theirs = answers_of(other, 2);
  ASSERT_EQ(theirs.size(), 2u);
  int answered = 0, refused = 0;
  for (const auto& a : theirs) {
    EXPECT_EQ(a.job_id, 1);
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
  FakeAgent a(ctx, bridge->endpoint(), "A");
  std::this_thread::sleep_for(100ms);  // connected
  {
    caf::scoped_actor flood{sys};
    for (int64_t id = 1; id <= 50000; ++id)
      caf::anon_send(dispatcher, eval_atom::value, make_job(id));
  }
  std::promise<void> stats_sent;
  auto stats_answered = std::async(std::launch::async, [&] {
    caf::scoped_actor self{sys};
    auto handle = self->request(dispatcher, caf::infinite, stats_atom::value);
    stats_sent.set_value();
    handle.receive([](DispatcherStats&) {}, [](caf::error&) {});
    return std::chrono::steady_clock::now();
  });
  stats_sent.get_future().wait();
  a.hello(1);
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (a.interval_ms == 0 && std::chrono::steady_clock::now() < deadline) (void)a.next(5ms);
  auto welcomed = std::chrono::steady_clock::now();
  ASSERT_EQ(a.interval_ms, 500) << "welcomed";
  EXPECT_LT(welcomed, stats_answered.get())
      << "the HELLO was handled before the requests and the stats request queued ahead of it";
}

TEST_F(DispatcherTest, SilentAgentsJobIsRequeuedToAnotherAgent) {
  DispatcherOptions o;
  o.ledger.heartbeat = 50ms;
  o.ledger.liveness = 3;
  start(o);
  FakeAgent a(ctx, bridge->endpoint(), "A");
  a.hello(1);
  await_agents(1);  // A registers before B, so A gets the job
  auto pending = request_eval(sys, dispatcher, make_job(7));
  auto first = a.next_job(5s);
  ASSERT_TRUE(first);
  FakeAgent b(ctx, bridge->endpoint(), "B");
  b.hello(1);
  // B stays alive, A says nothing more: after 150 ms A is dead and B gets job 7.
  std::optional<wire::Job> requeued;
  for (int i = 0; i < 100 && !requeued; ++i) {
    b.heartbeat();
    requeued = b.next_job(30ms);
  }
  ASSERT_TRUE(requeued);
  EXPECT_EQ(requeued->job_id, first->job_id) << "the same ticket, requeued";
  a.send(answer(*first, "A"));  // A's late answer is deduplicated by its lease
  b.send(answer(*requeued, "B"));
  auto got = pending.get();
  ASSERT_TRUE(got.result);
  EXPECT_EQ(got.result->agent.agent_id, "B");
  EXPECT_EQ(got.result->agent.dispatches, 2);
  EXPECT_EQ(stats().agents, 1) << "A was declared dead";
}

TEST_F(DispatcherTest, OnlyTheLeaseHolderCanPostAResult) {
  start();
  FakeAgent a(ctx, bridge->endpoint(), "A");
  a.hello(1);
  auto pending = request_eval(sys, dispatcher, make_job(5));
  auto job = a.next_job(5s);
  ASSERT_TRUE(job);
  // A stranger with no HELLO, and a registered agent that does not hold the lease, both try
  // to post a `correct` with a 1000x speedup for job 5 under A's lease.
  FakeAgent stranger(ctx, bridge->endpoint(), "S");
  FakeAgent other(ctx, bridge->endpoint(), "O");
  other.hello(1);
  await_agents(2);
  wire::Result forged = answer(*job, "A");
  forged.evaluation.kernel_ms = 0.001;
  forged.evaluation.baseline_ms = 1.0;
  stranger.send(forged);
  other.send(forged);
  for (int i = 0; i < 100 && stats().refused_results < 2; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(stats().refused_results, 2);
  EXPECT_EQ(pending.wait_for(0ms), std::future_status::timeout) << "nothing was delivered";
  wire::Result honest = answer(*job, "A", Verdict::numerics_mismatch);
  a.send(honest);
  auto got = pending.get();
  ASSERT_TRUE(got.result);
  EXPECT_EQ(got.result->evaluation.verdict, Verdict::numerics_mismatch);
}

TEST_F(DispatcherTest, BadHellosAreRefusedWithAByeAndGetNoWork) {
  start();
  FakeAgent greedy(ctx, bridge->endpoint(), "G");
  greedy.send(FakeAgent::hello_frame("G", 2147483647));
  auto bye = greedy.next(5s);
  ASSERT_TRUE(bye);
  ASSERT_TRUE(std::holds_alternative<wire::Bye>(*bye));
  EXPECT_NE(std::get<wire::Bye>(*bye).reason.find("slots 2147483647"), std::string::npos);
  FakeAgent odd(ctx, bridge->endpoint(), "O");
  wire::Hello h = FakeAgent::hello_frame("O", 1);
  h.stages.push_back("teleport");
  odd.send(h);
  auto bye2 = odd.next(5s);
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
  std::vector<std::unique_ptr<FakeAgent>> flood;
  for (int i = 0; i < 200; ++i) {
    flood.push_back(std::make_unique<FakeAgent>(ctx, bridge->endpoint(), "f" + std::to_string(i)));
    flood.back()->hello(1);
  }
  for (int i = 0; i < 250 && stats().refused_hellos + stats().agents < 200; ++i)
    std::this_thread::sleep_for(20ms);
  auto s = stats();
  EXPECT_LE(s.agents, 21);
  EXPECT_GE(s.refused_hellos, 179);
}

TEST_F(DispatcherTest, JobsGoOnlyToAgentsOfTheTargetBackend) {
  DispatcherOptions o;
  o.target.backend = "tpu";
  start(o);
  FakeAgent tpu(ctx, bridge->endpoint(), "T");
  tpu.hello(1, "tpu");
  await_agents(1);
  auto pending = request_eval(sys, dispatcher, make_job(1));
  auto job = tpu.next_job(5s);
  ASSERT_TRUE(job) << "no CPU agents: straight to the TPU";
  EXPECT_EQ(job->check_level, "full");
  tpu.send(answer(*job, "T"));
  ASSERT_TRUE(pending.get().result);

  DispatcherOptions cpu_only;  // target interpret: a TPU agent must not get the job
  TearDown();
  start(cpu_only);
  FakeAgent wrong(ctx, bridge->endpoint(), "W");
  wrong.hello(1, "tpu");
  await_agents(1);
  auto waiting = request_eval(sys, dispatcher, make_job(2));
  EXPECT_FALSE(wrong.next_job(500ms)) << "wrong backend";
  FakeAgent right(ctx, bridge->endpoint(), "R");
  right.hello(1);
  auto j2 = right.next_job(5s);
  ASSERT_TRUE(j2);
  right.send(answer(*j2, "R"));
  ASSERT_TRUE(waiting.get().result);
}

TEST_F(DispatcherTest, CascadeScreensOnCpuAgentsAndOnlySurvivorsReachTheChip) {
  DispatcherOptions o;
  o.target.backend = "tpu";
  start(o);
  FakeAgent cpu(ctx, bridge->endpoint(), "C");
  cpu.hello(2);
  FakeAgent tpu(ctx, bridge->endpoint(), "T");
  tpu.hello(1, "tpu");
  await_agents(2);
  auto failing = request_eval(sys, dispatcher, make_job(1));
  auto passing = request_eval(sys, dispatcher, make_job(2));
  std::map<int64_t, wire::Job> screened;
  for (int i = 0; i < 2; ++i) {
    auto j = cpu.next_job(5s);
    ASSERT_TRUE(j);
    EXPECT_EQ(j->check_level, "cpu_check");
    screened[j->code == "code of 1" ? 1 : 2] = *j;
  }
  ASSERT_EQ(screened.size(), 2u);
  cpu.send(answer(screened[1], "C", Verdict::lowering_error));
  cpu.send(answer(screened[2], "C", Verdict::correct));
  auto f = failing.get();
  ASSERT_TRUE(f.result);
  EXPECT_EQ(f.result->evaluation.verdict, Verdict::lowering_error)
      << "failed on CPU: never took the chip";
  auto on_chip = tpu.next_job(5s);
  ASSERT_TRUE(on_chip);
  EXPECT_EQ(on_chip->job_id, screened[2].job_id) << "the same ticket on both tiers";
  EXPECT_EQ(on_chip->check_level, "full");
  EXPECT_NE(on_chip->lease, screened[2].lease);
  wire::Result r = answer(*on_chip, "T");
  r.evaluation.timing_kind = TimingKind::tpu_profiler;
  tpu.send(r);
  auto p = passing.get();
  ASSERT_TRUE(p.result);
  EXPECT_EQ(p.result->evaluation.timing_kind, TimingKind::tpu_profiler);
  EXPECT_EQ(p.result->agent.dispatches, 2) << "CPU tier + TPU tier";
  EXPECT_EQ(p.result->agent.backend, "tpu");
  EXPECT_FALSE(tpu.next_job(200ms)) << "job 1 never reached the TPU";
}

TEST_F(DispatcherTest, LostTooOftenIsARetryableErrorNotACrash) {
  DispatcherOptions o;
  o.ledger.max_attempts = 1;
  start(o);
  FakeAgent a(ctx, bridge->endpoint(), "A");
  a.hello(1);
  auto pending = request_eval(sys, dispatcher, make_job(9));
  ASSERT_TRUE(a.next_job(5s));
  a.send(wire::Bye{"A", "going away"});
  auto got = pending.get();
  EXPECT_FALSE(got.result);
  ASSERT_TRUE(got.error);
  EXPECT_EQ(*got.error, Errc::unavailable);
  EXPECT_TRUE(retryable(*got.error));
}

TEST_F(DispatcherTest, CurveAdmitsOnlyAllowedKeysAndTheKeyIsTheIdentity) {
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

// Issue 21 item 6: a stolen allowlisted key that answers `correct` for every lease. Alone, it
// cannot be checked, and its forgeries are answered, each naming its key. Once an honest agent
// joins, every result is checked by the other agent (share 1.0): the forger's `correct` meets
// the honest `numerics_mismatch`, its key is quarantined (BYE, no more leases, HELLO refused),
// and the honest failure is the answer.
TEST_F(DispatcherTest, AForgingKeyIsCaughtQuarantinedAndItsResultsNameIt) {
  keys::KeyPair server = keys::generate(), honest = keys::generate(), forger = keys::generate();
  ZmqBridgeOptions b;
  b.endpoint = "tcp://127.0.0.1:0";
  b.curve_secret_key = server.secret_key;
  DispatcherOptions o;
  o.checks.share = 1.0;
  o.checks.seed = 7;
  o.ledger.liveness = 100;  // the fake agents do not heartbeat while the test waits
  start(o, b);
  bridge->allow(honest.public_key);
  bridge->allow(forger.public_key);
  FakeAgent f(ctx, bridge->endpoint(), "f", server.public_key, forger);
  f.hello(1);
  await_agents(1);
  auto forge = [&](const wire::Job& j) {
    wire::Result r = answer(j, "forger");
    r.evaluation.kernel_ms = 1.0;
    r.evaluation.baseline_ms = 1.5;  // a modest 1.5x: nothing for the plausibility gate
    r.evaluation.timing_kind = TimingKind::cpu_wall;
    f.send(r);
  };
  std::vector<Evaluated> forged;
  for (int64_t id = 1; id <= 2; ++id) {
    auto pending = request_eval(sys, dispatcher, make_job(id));
    auto j = f.next_job(5s);
    ASSERT_TRUE(j);
    forge(*j);
    auto got = pending.get();
    ASSERT_TRUE(got.result);
    forged.push_back(*got.result);
  }
  for (const auto& r : forged) {
    EXPECT_EQ(r.evaluation.verdict, Verdict::correct) << "no other agent: nothing could check it";
    EXPECT_EQ(r.agent.agent_key, forger.public_key) << "but it names the key that sent it";
    EXPECT_NE(r.checks.cross_check_json.find("unchecked"), std::string::npos)
        << r.checks.cross_check_json;
  }

  FakeAgent h(ctx, bridge->endpoint(), "h", server.public_key, honest);
  h.hello(1);
  await_agents(2);
  std::vector<std::future<Answer>> pending;
  for (int64_t id = 3; id <= 6; ++id) pending.push_back(request_eval(sys, dispatcher, make_job(id)));
  std::map<int64_t, std::vector<std::string>> seen_by;  // job id -> who got it
  bool forger_told = false;
  auto all_ready = [&] {
    for (auto& p : pending)
      if (p.wait_for(0s) != std::future_status::ready) return false;
    return true;
  };
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (!all_ready() && std::chrono::steady_clock::now() < deadline) {
    if (auto m = f.next(10ms)) {
      if (auto* j = std::get_if<wire::Job>(&*m)) {
        seen_by[j->job_id].push_back("f");
        forge(*j);
      } else if (auto* bye = std::get_if<wire::Bye>(&*m)) {
        forger_told = bye->reason.find("quarantined") != std::string::npos;
      }
    }
    if (auto j = h.next_job(10ms)) {
      seen_by[j->job_id].push_back("h");
      h.send(answer(*j, "honest", Verdict::numerics_mismatch));
    }
  }
  ASSERT_TRUE(all_ready());
  for (auto& p : pending) {
    auto got = p.get();
    ASSERT_TRUE(got.result);
    EXPECT_EQ(got.result->evaluation.verdict, Verdict::numerics_mismatch)
        << "no forged correct after the check";
    EXPECT_EQ(got.result->agent.agent_key, honest.public_key);
  }
  EXPECT_TRUE(forger_told);
  bool checked_in_disguise = false;
  for (const auto& [id, who] : seen_by)
    if (who.size() == 2 && who[0] != who[1]) checked_in_disguise = true;
  EXPECT_TRUE(checked_in_disguise) << "a check is the same job id, sent to the other agent";

  caf::scoped_actor self{sys};
  std::vector<Quarantine> caught;
  self->request(dispatcher, caf::infinite, quarantine_atom::value)
      .receive([&](std::vector<Quarantine>& q) { caught = q; }, [](caf::error&) {});
  ASSERT_EQ(caught.size(), 1u);
  EXPECT_EQ(caught[0].agent_key, forger.public_key);
  EXPECT_EQ(caught[0].agent_id, "forger");
  EXPECT_NE(caught[0].reason.find("claimed correct"), std::string::npos) << caught[0].reason;
  EXPECT_EQ(stats().quarantined, 1);
  EXPECT_EQ(stats().agents, 1);

  // No more leases for the key, whatever it says.
  f.hello(1);
  auto refused = f.next(2s);
  ASSERT_TRUE(refused && std::holds_alternative<wire::Bye>(*refused));
  EXPECT_NE(std::get<wire::Bye>(*refused).reason.find("quarantined"), std::string::npos);
  auto later = request_eval(sys, dispatcher, make_job(9));
  EXPECT_FALSE(f.next_job(300ms));
  auto j = h.next_job(5s);
  ASSERT_TRUE(j);
  h.send(answer(*j, "honest", Verdict::numerics_mismatch));
  EXPECT_TRUE(later.get().result);
}

// Issue 23 item 3 on the dispatcher: a `correct` whose speedup is above the ceiling is re-timed
// on another slot before it is answered; here the second timing does not hold, so it replaces
// the first, and both are kept.
TEST_F(DispatcherTest, ASuspectSpeedIsRetimedOnAnotherSlotBeforeItIsAnswered) {
  start();  // random checks off: only the gate asks again
  FakeAgent a(ctx, bridge->endpoint(), "A");
  a.hello(2);
  await_agents(1);
  auto pending = request_eval(sys, dispatcher, make_job(5));
  auto first = a.next_job(5s);
  ASSERT_TRUE(first);
  wire::Result r = answer(*first, "A");
  r.evaluation.kernel_ms = 0.01;
  r.evaluation.baseline_ms = 1.0;  // 100x
  r.evaluation.timing_kind = TimingKind::cpu_wall;
  a.send(r);
  auto again = a.next_job(5s);
  ASSERT_TRUE(again) << "the only agent re-times it on its other slot";
  EXPECT_EQ(again->job_id, first->job_id);
  EXPECT_NE(again->lease, first->lease);
  wire::Result r2 = answer(*again, "A");
  r2.evaluation.kernel_ms = 0.5;
  r2.evaluation.baseline_ms = 1.0;
  r2.evaluation.timing_kind = TimingKind::cpu_wall;
  a.send(r2);
  auto got = pending.get();
  ASSERT_TRUE(got.result);
  EXPECT_EQ(got.result->checks.plausibility, "retimed");
  EXPECT_EQ(got.result->evaluation.kernel_ms, 0.5);
  EXPECT_NE(got.result->checks.retiming_json.find("\"first\""), std::string::npos);
  EXPECT_EQ(got.result->agent.dispatches, 2);
  EXPECT_EQ(stats().checks, 1);
  EXPECT_EQ(stats().quarantined, 0);
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
