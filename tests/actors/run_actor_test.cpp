// The run actor over a real store, with fake peers: every search ends and
// the run is marked finished; with global reallocation the budget of a
// hopeless workload goes to the others and the total is never exceeded.
#include "actors/run_actor.hpp"

#include <gtest/gtest.h>

#include <map>

#include "actors/messages.hpp"
#include "tests/actors/fake_peers.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;

class RunActorTest : public testing::StoreFixture {
 protected:

  RunPlan plan(const std::vector<std::string>& workloads, int budget) {
    RunPlan p;
    p.run_id = run_id_;
    p.live_progress = false;
    p.budget_per_search = budget;
    for (const auto& w : workloads) {
      WorkloadSearchSpec s;
      s.run_id = run_id_;
      s.brief = {w, w, "def workload(a, b):\n    return a @ b\n", ""};
      s.method.method = "iterative";
      s.eval.workload_id = w;
      p.searches.push_back(s);
    }
    return p;
  }

  std::string run(RunPlan p, std::shared_ptr<testing::Counters> c) {
    auto gateway = sys_.spawn(testing::fake_gateway, c);
    auto evaluator = sys_.spawn(testing::fake_evaluator, c, 1ms);
    auto r = spawn_run(sys_, std::move(p), store_, gateway, evaluator);
    caf::scoped_actor self{sys_};
    std::string status = "no answer";
    self->request(r, 120s, start_atom::value)
        .receive([&](std::string& s) { status = s; },
                 [&](caf::error& e) { status = to_string(e); });
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(evaluator, caf::exit_reason::user_shutdown);
    return status;
  }

  std::map<std::string, int> samples_per_workload() {
    std::map<std::string, int> out;
    for (auto& s : RunStore::open(db_.path(), RunStore::Mode::read_only)->samples(run_id_)) {
      out[s.workload]++;
    }
    return out;
  }

};

TEST_F(RunActorTest, EverySearchSpendsItsOwnBudgetAndTheRunFinishes) {
  auto c = std::make_shared<testing::Counters>();
  EXPECT_EQ(run(plan({"8p", "1p", "9p"}, 4), c), "finished");
  EXPECT_EQ(samples_per_workload(), (std::map<std::string, int>{{"1p", 4}, {"8p", 4}, {"9p", 4}}));
  auto r = RunStore::open(db_.path(), RunStore::Mode::read_only)->find_run(run_id_);
  EXPECT_EQ(r->status, "finished");
}

TEST_F(RunActorTest, GlobalReallocationMovesBudgetAwayFromAHopelessWorkload) {
  auto c = std::make_shared<testing::Counters>();
  c->hopeless_workload = "1p";
  RunPlan p = plan({"8p", "1p", "9p"}, 12);
  p.global = true;
  p.global_config.initial_fraction = 0.5;
  p.global_config.hopeless_after = 6;
  p.global_config.saturation_window = 100;
  EXPECT_EQ(run(p, c), "finished");
  auto n = samples_per_workload();
  EXPECT_EQ(n["1p"], 6);  // its first grant, then closed
  EXPECT_GT(n["8p"], 12);
  EXPECT_GT(n["9p"], 12);
  EXPECT_EQ(n["1p"] + n["8p"] + n["9p"], 36);  // the whole run's budget, no more
}

}  // namespace
}  // namespace palladium
