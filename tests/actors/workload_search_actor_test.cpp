// The workload search actor over a real store actor and database, with a
// fake LLM gateway and a fake evaluator that holds jobs for a while: it
// drives any strategy, keeps several samples in flight where the strategy
// allows, stores every role, resumes without paying twice, asks again when
// a prompt changed, and moves its budget when the run says so. On the deterministic fixture:
// a store or gateway that never answers fails the search at the configured request timeout.
#include "actors/workload_search_actor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "search/iterative_search.hpp"
#include "tests/actors/deterministic_fixture.hpp"
#include "tests/actors/fake_peers.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using testing::Counters;
using testing::fake_evaluator;
using testing::fake_gateway;

// The test's scoped actor plays the run: it receives what a search sends a run.
RunActor plays_run(caf::scoped_actor& self) { return caf::actor_cast<RunActor>(self); }

class WorkloadSearchActorTest : public testing::StoreFixture {
 protected:

  WorkloadSearchSpec spec(const std::string& method, int budget) {
    WorkloadSearchSpec s;
    s.run_id = run_id_;
    s.brief = {"8p", "GEMM", "def workload(a, b):\n    return a @ b\n", ""};
    s.method.method = method;
    s.method.autocomp.beam_size = 2;
    s.method.autocomp.plans_per_parent = 2;
    s.method.autocomp.codes_per_plan = 2;
    s.menus = {{"translate it"}, {"tile it"}};
    s.seed = 3;
    s.budget = budget;
    s.eval.workload_id = "8p";
    s.in_flight = 16;
    return s;
  }

  // Runs one search to its end; returns the statuses it reported.
  std::vector<SearchStatus> run_search(WorkloadSearchSpec s, std::shared_ptr<Counters> c,
                                       std::chrono::milliseconds hold = 30ms,
                                       std::function<void(caf::scoped_actor&, WorkloadSearchActor&,
                                                          const SearchStatus&)>
                                           on_idle = nullptr) {
    return drive(std::move(s), sys_.spawn(fake_gateway, c), sys_.spawn(fake_evaluator, c, hold),
                 std::move(on_idle));
  }

  // Runs one search against the given peers to its end; returns the statuses it reported.
  std::vector<SearchStatus> drive(WorkloadSearchSpec s, LlmGatewayActor gateway,
                                  EvalDispatcherActor evaluator,
                                  std::function<void(caf::scoped_actor&, WorkloadSearchActor&,
                                                     const SearchStatus&)>
                                      on_idle = nullptr) {
    caf::scoped_actor run{sys_};
    auto search = spawn_workload_search(sys_, std::move(s),
                                        SearchPeers{store_, gateway, evaluator, plays_run(run)});
    run->monitor(search);
    std::vector<SearchStatus> statuses;
    bool down = false;
    while (!down) {
      run->receive(
          [&](progress_atom, const ProgressEvent&) {},
          [&](status_atom, int, const SearchStatus& st) {
            statuses.push_back(st);
            if (st.idle && on_idle) on_idle(run, search, st);
          },
          [&](caf::down_msg& dm) {
            down = true;
            EXPECT_FALSE(dm.reason) << to_string(dm.reason);
          },
          caf::after(60s) >> [&] {
            ADD_FAILURE() << "the search did not end";
            down = true;
          });
    }
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(evaluator, caf::exit_reason::user_shutdown);
    return statuses;
  }

  std::unique_ptr<RunStore> reader() { return RunStore::open(db_.path(), RunStore::Mode::read_only); }

};

TEST_F(WorkloadSearchActorTest, IterativeRunsOneSampleAtATimeAndStoresEach) {
  auto c = std::make_shared<Counters>();
  auto statuses = run_search(spec("iterative", 4), c);
  EXPECT_EQ(c->llm_calls, 4);
  EXPECT_EQ(c->jobs, 4);
  EXPECT_EQ(c->max_jobs_pending, 1);
  ASSERT_FALSE(statuses.empty());
  EXPECT_TRUE(statuses.back().done);
  auto r = reader();
  auto samples = r->samples(run_id_);
  ASSERT_EQ(samples.size(), 4u);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].role, SampleRole::code);
    EXPECT_EQ(samples[i].phase, Phase::iterate);
    if (i > 0) {
      EXPECT_TRUE(samples[i].parent_id.has_value());
    }
  }
  EXPECT_EQ(r->evaluations(run_id_).size(), 4u);
}

// Issue 23: when the search ends, its best and runner-up correct kernels (by the evaluations)
// go to the dispatcher as one re-timing job, and the sitting is stored before the search ends.
TEST_F(WorkloadSearchActorTest, TheBestTwoAreRetimedInOneSittingWhichIsStored) {
  auto c = std::make_shared<Counters>();
  // Samples 1, 4 and 7 are correct, each faster than the one before.
  auto statuses = run_search(spec("iterative", 8), c);
  ASSERT_FALSE(statuses.empty());
  EXPECT_TRUE(statuses.back().done);
  EXPECT_EQ(c->jobs, 8) << "the re-timing is no evaluation";
  ASSERT_EQ(c->retimes, 1);
  ASSERT_EQ(c->retime_codes.size(), 2u);
  EXPECT_NE(c->retime_codes[0].find("# sample 7 CORRECT"), std::string::npos);
  EXPECT_NE(c->retime_codes[1].find("# sample 4 CORRECT"), std::string::npos);
  auto r = reader();
  auto sittings = r->sittings(run_id_);
  ASSERT_EQ(sittings.size(), 1u);
  const SittingRecord& s = sittings[0];
  EXPECT_EQ(s.workload, "8p");
  EXPECT_EQ(s.seed, 3);
  EXPECT_EQ(s.error, "");
  ASSERT_EQ(s.kernels.size(), 2u);
  std::map<int64_t, int> index_of;
  for (const auto& sample : r->samples(run_id_)) index_of[sample.id] = sample.sample_index;
  EXPECT_EQ(index_of[s.kernels[0].candidate_id], 7);
  EXPECT_EQ(index_of[s.kernels[1].candidate_id], 4);
  EXPECT_EQ(s.kernels[0].kernel_ms, 2.0);
  EXPECT_EQ(s.kernels[1].kernel_ms, 1.0);
  EXPECT_EQ(s.baseline_ms, 1.5);
  EXPECT_EQ(s.timing_runs, 5);
  EXPECT_EQ(s.timing_kind, "cpu-wall");
}

// Fewer than two timed correct kernels: nothing to re-time, no job.
TEST_F(WorkloadSearchActorTest, ASearchWithOneCorrectKernelAsksForNoSitting) {
  auto c = std::make_shared<Counters>();
  auto statuses = run_search(spec("iterative", 4), c);  // samples 0-3: only 1 is correct
  ASSERT_FALSE(statuses.empty());
  EXPECT_TRUE(statuses.back().done);
  EXPECT_EQ(c->jobs, 4);
  EXPECT_EQ(c->retimes, 0);
  EXPECT_TRUE(reader()->sittings(run_id_).empty());
}

// Issue 25: the search wrote an answer the gateway had not recorded under params "{}", a cache
// key no lookup makes. The gateway owns every call and response row; the search writes none.
TEST_F(WorkloadSearchActorTest, AnAnswerTheGatewayDidNotRecordGetsNoCallOrCacheRow) {
  auto c = std::make_shared<Counters>();
  run_search(spec("iterative", 2), c);  // the fake gateway records nothing (response_id 0)
  auto r = reader();
  auto samples = r->samples(run_id_);
  ASSERT_EQ(samples.size(), 2u);
  for (const auto& s : samples) {
    EXPECT_FALSE(s.response_id.has_value());
    EXPECT_NE(s.response.find("def workload"), std::string::npos) << "the answer is in the sample";
  }
  EXPECT_TRUE(r->llm_calls(run_id_).empty());
  EXPECT_TRUE(r->llm_attribution(run_id_).empty());
}

// The real gateway's way: the call and the answer are stored (under the gateway's own key)
// before it replies, and the sample points at that row.
LlmGatewayActor::behavior_type recording_gateway(LlmGatewayActor::pointer self, StoreActor store,
                                                 int64_t run_id) {
  return {
      [=](generate_atom, const ChatRequest& req) -> caf::result<ChatResponse> {
        auto promise = self->make_response_promise<ChatResponse>();
        LlmCallRecord call;
        call.run_id = run_id;
        call.provider = call.model = "fake";
        LlmResponseRecord answer;
        answer.provider = answer.model = "fake";
        answer.params_json = R"({"temperature":0.5})";
        answer.sample_index = req.sample_index;
        answer.seed = static_cast<int64_t>(req.seed);
        answer.prompt_system = req.system_prompt;
        answer.prompt_user = req.user_prompt;
        answer.text = "```python\ndef workload(a, b):\n    return a @ b\n```\n";
        self->request(store, caf::infinite, put_call_atom::value, call,
                      std::vector<LlmResponseRecord>{answer})
            .then([=](const PutAnsweredCallResult& put) mutable {
              ChatResponse r;
              r.text = answer.text;
              r.response_id = put.responses.at(0).id;
              promise.deliver(r);
            });
        return promise;
      },
      [](stats_atom) { return LlmGatewayStats{}; },
  };
}

TEST_F(WorkloadSearchActorTest, TheSampleOfARecordedAnswerPointsAtTheGatewaysRow) {
  auto c = std::make_shared<Counters>();
  drive(spec("iterative", 2), sys_.spawn(recording_gateway, store_, run_id_),
        sys_.spawn(fake_evaluator, c, std::chrono::milliseconds(5)));
  auto r = reader();
  auto samples = r->samples(run_id_);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(r->llm_calls(run_id_).size(), 2u) << "one call row per answer, the gateway's only";
  for (const auto& s : samples) {
    ASSERT_TRUE(s.response_id.has_value());
    auto row = r->find_response(*s.response_id);
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->params_json, R"({"temperature":0.5})");
    EXPECT_EQ(row->sample_index, s.sample_index);
  }
}

TEST_F(WorkloadSearchActorTest, BeamKeepsSeveralSamplesInFlightAndStoresEveryRole) {
  auto c = std::make_shared<Counters>();
  run_search(spec("autocomp", 12), c);
  EXPECT_GT(c->max_jobs_pending, 1) << "evaluations never overlapped";
  auto r = reader();
  int plans = 0, codes = 0, scores = 0;
  for (auto& s : r->samples(run_id_)) {
    EXPECT_EQ(s.method, "autocomp");
    if (s.role == SampleRole::plan) plans++;
    if (s.role == SampleRole::code) {
      codes++;
      EXPECT_TRUE(s.plan_id.has_value());
      EXPECT_FALSE(s.plan.empty());
    }
    if (s.role == SampleRole::score) {
      scores++;
      EXPECT_EQ(s.score, 9.0);
      EXPECT_TRUE(s.parent_id.has_value());
    }
  }
  EXPECT_EQ(codes, 12);
  EXPECT_GT(plans, 0);
  EXPECT_GT(scores, 0);
  EXPECT_EQ(static_cast<int>(r->evaluations(run_id_).size()), codes);
}

TEST_F(WorkloadSearchActorTest, InFlightCapOfOneSerialisesTheBeam) {
  auto c = std::make_shared<Counters>();
  auto s = spec("autocomp", 8);
  s.in_flight = 1;
  run_search(s, c, 5ms);
  EXPECT_EQ(c->max_jobs_pending, 1);
}

TEST_F(WorkloadSearchActorTest, ResumedSearchPaysForNothingTwice) {
  auto first = std::make_shared<Counters>();
  run_search(spec("autocomp", 8), first, 5ms);
  const auto before = reader()->samples(run_id_).size();
  auto again = std::make_shared<Counters>();
  auto statuses = run_search(spec("autocomp", 8), again, 5ms);
  EXPECT_EQ(again->llm_calls, 0);
  EXPECT_EQ(again->jobs, 0);
  EXPECT_TRUE(statuses.back().done);
  EXPECT_EQ(reader()->samples(run_id_).size(), before);
}

TEST_F(WorkloadSearchActorTest, ChangedPromptSupersedesTheStoredSampleAndAsksAgain) {
  run_search(spec("iterative", 3), std::make_shared<Counters>(), 5ms);
  auto changed = spec("iterative", 3);
  changed.brief.baseline_source += "# the workload module changed\n";
  auto c = std::make_shared<Counters>();
  run_search(changed, c, 5ms);
  EXPECT_EQ(c->llm_calls, 3);
  EXPECT_EQ(c->jobs, 3);
  auto r = reader();
  auto live = r->samples(run_id_);
  auto all = r->samples(run_id_, RunStore::Texts::none, /*include_superseded=*/true);
  EXPECT_EQ(live.size(), 3u);
  EXPECT_EQ(all.size(), 6u);
  for (auto& s : live) {
    EXPECT_NE(s.prompt_user.find("the workload module changed"), std::string::npos);
  }
  EXPECT_EQ(r->evaluations(run_id_).size(), 3u);  // of the live samples only
}

TEST_F(WorkloadSearchActorTest, NewCandidateCostsTwoStoreWrites) {
  run_search(spec("iterative", 5), std::make_shared<Counters>(), 1ms);
  caf::scoped_actor self{sys_};
  // Samples 1 and 4 are correct: one more write, the sitting of the search's best two.
  self->request(store_, 10s, store_stats_atom::value)
      .receive([&](const StoreStats& s) { EXPECT_EQ(s.writes, 2 * 5 + 1); },
               [&](caf::error& e) { FAIL() << to_string(e); });
}

TEST_F(WorkloadSearchActorTest, OpenBudgetWaitsIdleUntilTheRunGrantsMore) {
  auto s = spec("iterative", 2);
  s.budget_open = true;
  auto c = std::make_shared<Counters>();
  int grants = 0;
  auto statuses = run_search(s, c, 1ms, [&](caf::scoped_actor& run, WorkloadSearchActor& search,
                                             const SearchStatus& st) {
    EXPECT_EQ(st.spent, st.limit);
    // First grant 3 more (still open), then close the budget.
    run->send(search, budget_atom::value, st.limit + 3, grants == 0);
    grants++;
  });
  EXPECT_EQ(grants, 2);
  EXPECT_EQ(c->llm_calls, 8);
  EXPECT_TRUE(statuses.back().done);
  EXPECT_EQ(statuses.back().spent, 8);
}

}  // namespace
// Batched evaluations have no response to carry an error: a search whose dispatcher goes away
// with a job in flight fails, instead of waiting for an answer that never comes.
TEST_F(WorkloadSearchActorTest, ADispatcherThatGoesAwayFailsTheSearchWithAJobInFlight) {
  auto c = std::make_shared<Counters>();
  auto gateway = sys_.spawn(fake_gateway, c);
  auto evaluator = sys_.spawn(fake_evaluator, c, std::chrono::milliseconds(60000));
  caf::scoped_actor run{sys_};
  auto search = spawn_workload_search(sys_, spec("iterative", 4),
                                      SearchPeers{store_, gateway, evaluator, plays_run(run)});
  run->monitor(search);
  for (int i = 0; i < 500 && c->jobs == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(c->jobs, 1) << "the first job reached the evaluator";
  caf::anon_send_exit(evaluator, caf::exit_reason::user_shutdown);
  bool down = false;
  while (!down) {
    run->receive([&](progress_atom, const ProgressEvent&) {},
                 [&](status_atom, int, const SearchStatus&) {},
                 [&](caf::down_msg& dm) {
                   down = true;
                   EXPECT_TRUE(dm.reason) << "the search failed";
                   EXPECT_EQ(errc_of(dm.reason), Errc::unavailable)
                       << "a code the run can act on: " << to_string(dm.reason);
                 },
                 caf::after(10s) >> [&] {
                   ADD_FAILURE() << "the search still waits for its answer";
                   down = true;
                 });
  }
  caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
}

namespace {

// -- request timeouts, on the deterministic fixture --------------------------------------------

// A peer that takes messages and never answers.
caf::behavior black_hole(caf::event_based_actor* self) {
  self->set_default_handler(caf::skip);
  return {[](int) {}};
}

// A store that has nothing stored for the search and never answers anything else.
caf::behavior empty_store(caf::event_based_actor* self) {
  self->set_default_handler(caf::skip);
  return {[](load_search_atom, const SampleKey&) { return StoredSearch{}; }};
}

class WorkloadSearchTimeoutTest : public testing::DeterministicFixture {
 protected:
  WorkloadSearchSpec spec() {
    WorkloadSearchSpec s;
    s.run_id = 1;
    s.brief = {"8p", "GEMM", "def workload(a, b):\n    return a @ b\n", ""};
    s.method.method = "iterative";
    s.budget = 2;
    s.eval.workload_id = "8p";
    s.timeouts.store = 2s;
    s.timeouts.llm = 10s;
    return s;
  }
  // Spawns the search over `store` and silent other peers; `reason` gets its exit reason.
  void start(caf::actor store, std::shared_ptr<caf::error> reason, std::shared_ptr<bool> down) {
    auto silent = track(sys.spawn(black_hole));
    auto search = spawn_workload_search(
        sys, spec(),
        SearchPeers{caf::actor_cast<StoreActor>(store), caf::actor_cast<LlmGatewayActor>(silent),
                    caf::actor_cast<EvalDispatcherActor>(silent),
                    caf::actor_cast<RunActor>(silent)});
    track(sys.spawn([=](caf::event_based_actor* self) -> caf::behavior {
      self->monitor(search);
      self->set_down_handler([=](caf::down_msg& dm) {
        *reason = dm.reason;
        *down = true;
        self->quit();
      });
      return {[](int) {}};  // a behavior keeps it alive to see the search go down
    }));
    run();
  }
};

TEST_F(WorkloadSearchTimeoutTest, AStoreThatNeverAnswersFailsTheSearchAtTheStoreTimeout) {
  auto reason = std::make_shared<caf::error>();
  auto down = std::make_shared<bool>(false);
  start(track(sys.spawn(black_hole)), reason, down);
  advance(1900ms, 100ms);
  EXPECT_FALSE(*down) << "still within timeouts.store";
  advance(200ms, 100ms);
  ASSERT_TRUE(*down);
  EXPECT_EQ(errc_of(*reason), Errc::deadline_exceeded) << to_string(*reason);
}

TEST_F(WorkloadSearchTimeoutTest, AGatewayThatNeverAnswersFailsTheSearchAtTheLlmTimeout) {
  auto reason = std::make_shared<caf::error>();
  auto down = std::make_shared<bool>(false);
  start(track(sys.spawn(empty_store)), reason, down);
  advance(9900ms, 100ms);
  EXPECT_FALSE(*down) << "still within timeouts.llm (the store answered)";
  advance(200ms, 100ms);
  ASSERT_TRUE(*down);
  EXPECT_EQ(errc_of(*reason), Errc::deadline_exceeded) << to_string(*reason);
  EXPECT_NE(to_string(*reason).find("LLM call failed"), std::string::npos) << to_string(*reason);
}

}  // namespace
}  // namespace palladium
