// From the agents' frames to the report: what the dispatcher's result checks decide is stored
// and read back by collect_report_input, and the sweep report shows it (issue 23 item 3, issue
// 21 item 6).
#include "report/report_input.hpp"

#include <future>

#include <gtest/gtest.h>

#include "actors/errors.hpp"
#include "actors/eval_dispatcher.hpp"
#include "actors/messages.hpp"
#include "report/sweep_report.hpp"
#include "tests/actors/fake_agent.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using testing::FakeAgent;

SampleRecord candidate(int64_t run_id, int index) {
  SampleRecord c;
  c.run_id = run_id;
  c.workload = "8p";
  c.method = "iterative";
  c.seed = 0;
  c.sample_index = index;
  c.prompt_system = "system";
  c.prompt_user = "user " + std::to_string(index);
  c.code = "def workload(x): ...\n";
  c.response = "```python\n" + c.code + "```\n";
  return c;
}

caf::actor_system_config& config() {
  static caf::actor_system_config cfg;
  static bool once = [] {
    cfg.set("scheduler.max-threads", 2);
    register_error_category(cfg);
    return true;
  }();
  (void)once;
  return cfg;
}

// A fake TPU agent reports a kernel time a tenth of the v6e roofline's floor: impossible. The
// dispatcher re-times it on the agent's other slot before answering; the second timing is
// impossible too, so the first is kept and flagged implausible_speed, both timings are stored,
// and the report lists the candidate under "Timings to look at".
TEST(ReportInput, ATimeBelowTheRooflineIsRetimedFlaggedStoredAndListed) {
  const WorkloadCost cost{918e12, 1.0};  // a 1 s floor on v6e
  caf::actor_system sys{config()};
  DispatcherOptions o;
  o.target.backend = "tpu";
  o.checks.costs["8p"] = cost;
  o.ledger.liveness = 100;  // the fake agent does not heartbeat while the test waits
  auto bridge = std::make_shared<ZmqBridge>(std::string("tcp://127.0.0.1:0"));
  auto dispatcher = spawn_eval_dispatcher(sys, bridge, o);
  zmq::context_t ctx;
  FakeAgent tpu(ctx, bridge->endpoint(), "T");
  tpu.hello(2, "tpu");

  TempDb db;
  auto store = RunStore::open(db.path());
  const int64_t run = store->begin_or_resume_run("r", "name: r\nworkloads: [8p]\n");
  const int64_t cid = store->put_sample(candidate(run, 0)).id;
  wire::Job job;
  job.job_id = cid;
  job.workload_id = "8p";
  job.code = "code";
  job.timeout_s = 30;
  job.seeds = {0};
  auto pending = std::async(std::launch::async, [&sys, dispatcher, job] {
    caf::scoped_actor self{sys};
    std::optional<Evaluated> got;
    self->request(dispatcher, std::chrono::seconds(20), eval_atom::value, job)
        .receive([&](Evaluated& r) { got = r; }, [](caf::error&) {});
    return got;
  });
  auto timed = [&](const wire::Job& j, double kernel_ms) {
    wire::Result r;
    r.job_id = j.job_id;
    r.lease = j.lease;
    r.agent_id = "T";
    r.backend = "tpu";
    r.evaluation.verdict = Verdict::correct;
    r.evaluation.stage = Stage::done;
    r.evaluation.kernel_ms = kernel_ms;
    r.evaluation.baseline_ms = 1.5 * kernel_ms;  // a modest 1.5x: only the roofline doubts it
    r.evaluation.timing_kind = TimingKind::tpu_profiler;
    tpu.send(r);
  };
  auto first = tpu.next_job(5s);
  ASSERT_TRUE(first);
  timed(*first, 100.0);
  auto second = tpu.next_job(5s);
  ASSERT_TRUE(second) << "re-timed on the agent's other slot";
  EXPECT_EQ(second->job_id, first->job_id) << "the same job (the dispatcher's ticket)";
  timed(*second, 110.0);
  auto result = pending.get();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->checks.plausibility, "implausible_speed");
  EXPECT_EQ(result->evaluation.kernel_ms, 100.0) << "the speed held: the first timing is kept";
  ASSERT_TRUE(store->put_evaluation(cid, *result));
  caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
  sys.await_all_actors_done();

  auto stored = store->find_evaluation(cid);
  EXPECT_EQ(stored->checks.plausibility, "implausible_speed");
  auto both = nlohmann::json::parse(stored->checks.retiming_json);
  EXPECT_EQ(both["first"]["kernel_ms"], 100.0);
  EXPECT_EQ(both["second"]["kernel_ms"], 110.0);
  EXPECT_NE(both["reason"].get<std::string>().find("roofline"), std::string::npos);

  auto in = collect_report_input(*store, std::nullopt, {});
  in.costs["8p"] = cost;
  auto report = sweep_report_json(in);
  const auto& sus = report["suspect_timings"];
  ASSERT_EQ(sus.size(), 1u) << sus.dump();
  EXPECT_EQ(sus[0]["candidate_id"], cid);
  EXPECT_EQ(sus[0]["plausibility"], "implausible_speed");
  EXPECT_EQ(sus[0]["retiming"]["second"]["kernel_ms"], 110.0);
  auto md = sweep_report_markdown(report);
  EXPECT_NE(md.find("| " + std::to_string(cid) + " | 8p | run-" + std::to_string(run) +
                    " | tpu-profiler | 1.500x | implausible_speed |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("first 100 ms, second 110 ms"), std::string::npos) << md;
}

// A quarantined key's results read as not evaluated, and the report names the key.
TEST(ReportInput, AQuarantinedKeysResultsArePendingAndTheKeyIsListed) {
  TempDb db;
  auto store = RunStore::open(db.path());
  const int64_t run = store->begin_or_resume_run("r", "name: r\nworkloads: [8p]\n");
  const int64_t forged = store->put_sample(candidate(run, 0)).id;
  const int64_t honest = store->put_sample(candidate(run, 1)).id;
  for (auto [id, key] : {std::pair<int64_t, const char*>{forged, "KEY-F"}, {honest, "KEY-H"}}) {
    EvaluationRecord e;
    e.candidate_id = id;
    e.evaluation.verdict = Verdict::correct;
    e.evaluation.stage = Stage::done;
    e.evaluation.kernel_ms = 1.0;
    e.evaluation.baseline_ms = 2.0;
    e.evaluation.timing_kind = TimingKind::cpu_wall;
    e.agent.agent_key = key;
    ASSERT_TRUE(store->put_evaluation(e));
  }
  QuarantineRecord q;
  q.run_id = run;
  q.agent_key = "KEY-F";
  q.agent_id = "forger";
  q.reason = "claimed correct";
  q.job_id = forged;
  store->put_quarantine(q);
  auto in = collect_report_input(*store, std::nullopt, {});
  ASSERT_EQ(in.cells.size(), 1u);
  for (const auto& c : in.cells[0].candidates)
    EXPECT_EQ(c.verdict.has_value(), c.id == honest) << "candidate " << c.id;
  ASSERT_EQ(in.quarantines.size(), 1u);
  EXPECT_EQ(in.quarantines[0].agent_key, "KEY-F");
  EXPECT_EQ(in.quarantines[0].evaluations, 1);
  auto report = sweep_report_json(in);
  EXPECT_EQ(report["cells"][0]["pending"], 1);
  EXPECT_EQ(report["quarantined_keys"][0]["agent_id"], "forger");
}

// A stored sitting reaches the sweep report: its faster kernel is the cell's best, at the
// speedup against the sitting's baseline, though the evaluations ranked it second.
TEST(ReportInput, AStoredSittingPublishesTheCellsBest) {
  TempDb db;
  auto store = RunStore::open(db.path());
  const int64_t run = store->begin_or_resume_run("r", "name: r\nworkloads: [8p]\n");
  const int64_t first = store->put_sample(candidate(run, 0)).id;
  const int64_t second = store->put_sample(candidate(run, 1)).id;
  for (auto [id, kernel_ms] : {std::pair<int64_t, double>{first, 1.0}, {second, 1.5}}) {
    EvaluationRecord e;
    e.candidate_id = id;
    e.evaluation.verdict = Verdict::correct;
    e.evaluation.stage = Stage::done;
    e.evaluation.kernel_ms = kernel_ms;
    e.evaluation.baseline_ms = 3.0;
    e.evaluation.timing_kind = TimingKind::cpu_wall;
    ASSERT_TRUE(store->put_evaluation(e));
  }
  SittingRecord s;
  s.run_id = run;
  s.workload = "8p";
  s.method = "iterative";
  s.kernels = {{first, 2.0, 1.9, 2.1}, {second, 1.6, 1.55, 1.65}};
  s.baseline_ms = 4.0;
  s.timing_runs = 5;
  s.timing_kind = "cpu-wall";
  store->put_sitting(s);
  auto report = sweep_report_json(collect_report_input(*store, std::nullopt, {}));
  const auto& cell = report["cells"][0];
  EXPECT_DOUBLE_EQ(cell["per_workload"][0]["best_speedup"].get<double>(), 4.0 / 1.6);
  EXPECT_EQ(cell["sittings"]["published"], 1);
  EXPECT_EQ(cell["sittings"]["unsettled"], 0);
  EXPECT_EQ(report["workloads"][0]["best"][0]["candidate_id"], second);
}

}  // namespace
}  // namespace palladium
