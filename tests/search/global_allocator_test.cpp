// Global reallocation across workloads: the allocator's rules, and its
// budget properties when it drives real strategies against fake worlds.
#include "search/global_allocator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "search/autocomp_search.hpp"
#include "search/iterative_search.hpp"
#include "tests/search/fake_world.hpp"

namespace palladium {
namespace {

using testing::correct;
using testing::FakeWorld;
using testing::wrong;

SearchStatus idle_status(int spent, int limit, int wanted, std::vector<double> best_after,
                         int correct_count) {
  SearchStatus s;
  s.spent = spent;
  s.limit = limit;
  s.open = true;
  s.idle = true;
  s.wanted = wanted;
  s.candidates = static_cast<int>(best_after.size());
  s.best_after = std::move(best_after);
  s.correct = correct_count;
  return s;
}

TEST(GlobalAllocatorTest, InitialLimitsAndPoolAddUpToTheTotal) {
  GlobalAllocator a(3, 10, {});
  EXPECT_EQ(a.total(), 30);
  EXPECT_EQ(a.initial_limit(), 5);
  EXPECT_EQ(a.pool(), 15);
  GlobalAllocatorConfig c;
  c.initial_fraction = 1.0;
  EXPECT_EQ(GlobalAllocator(3, 10, c).pool(), 0);
  c.initial_fraction = 2.0;
  EXPECT_THROW(GlobalAllocator(3, 10, c), std::invalid_argument);
}

TEST(GlobalAllocatorTest, EpochNeedsEverySearchIdleOrDoneWithItsGrantedLimit) {
  GlobalAllocator a(1, 10, {});
  SearchStatus busy = idle_status(2, 5, 1, {1.0, 1.0}, 0);
  busy.idle = false;
  EXPECT_THROW(a.at_epoch({busy}), std::invalid_argument);
  EXPECT_THROW(a.at_epoch({idle_status(2, 7, 1, {1.0, 1.0}, 0)}), std::invalid_argument);
  EXPECT_THROW(a.at_epoch({}), std::invalid_argument);
}

TEST(GlobalAllocatorTest, HopelessSearchIsClosedAtWhatItSpent) {
  GlobalAllocatorConfig c;
  c.hopeless_after = 4;
  GlobalAllocator a(2, 8, c);  // initial 4 each, pool 8
  auto grants = a.at_epoch({idle_status(4, 4, 1, {1, 1, 1, 1}, 0),
                            idle_status(4, 4, 1, {1.5, 1.5, 2.0, 2.0}, 2)});
  EXPECT_EQ(grants[0].standing, GlobalAllocator::Standing::hopeless);
  EXPECT_FALSE(grants[0].open);
  EXPECT_EQ(grants[0].limit, 4);
  EXPECT_TRUE(grants[1].open);
  EXPECT_GT(grants[1].limit, 4);
}

TEST(GlobalAllocatorTest, SaturatedSearchIsClosed) {
  GlobalAllocatorConfig c;
  c.saturation_window = 3;
  GlobalAllocator a(1, 10, c);
  // Best rose at candidate 1 and not in the 3 since.
  auto g = a.at_epoch({idle_status(5, 5, 1, {1.0, 2.0, 2.0, 2.0, 2.0}, 4)});
  EXPECT_EQ(g[0].standing, GlobalAllocator::Standing::saturated);
  EXPECT_FALSE(g[0].open);
  EXPECT_EQ(a.pool(), 5);
}

TEST(GlobalAllocatorTest, WhenThePoolRunsShortTheHighestExpectedGainIsServedFirst) {
  GlobalAllocatorConfig c;
  c.initial_fraction = 0.8;
  c.saturation_window = 100;
  c.hopeless_after = 100;
  GlobalAllocator a(2, 5, c);  // initial 4 each, pool 2
  // Search 1 improved recently (1 -> 3), search 0 barely (1 -> 1.1).
  auto g = a.at_epoch({idle_status(4, 4, 2, {1.0, 1.0, 1.0, 1.1}, 1),
                       idle_status(4, 4, 2, {1.0, 1.0, 2.0, 3.0}, 2)});
  EXPECT_GT(a.expected_gain(idle_status(4, 4, 2, {1.0, 1.0, 2.0, 3.0}, 2)),
            a.expected_gain(idle_status(4, 4, 2, {1.0, 1.0, 1.0, 1.1}, 1)));
  EXPECT_EQ(g[1].limit, 6);
  EXPECT_TRUE(g[1].open);
  EXPECT_EQ(g[0].limit, 4);  // nothing left for it: closed
  EXPECT_FALSE(g[0].open);
}

TEST(GlobalAllocatorTest, UnspentLimitGoesBackToThePool) {
  GlobalAllocator a(2, 10, {});
  // Search 0 is done having spent 2 of its 5.
  SearchStatus done = idle_status(2, 5, 0, {1, 1}, 0);
  done.idle = false;
  done.done = true;
  auto g = a.at_epoch({done, idle_status(5, 5, 3, {1, 1, 1, 1, 1.2}, 1)});
  EXPECT_EQ(g[0].limit, 2);
  EXPECT_EQ(g[1].limit, 8);  // wanted 3
  EXPECT_EQ(a.pool(), 20 - 2 - 8);
}

// ---- driving real strategies ---------------------------------------------

struct Search {
  std::unique_ptr<Strategy> strategy;
  FakeWorld world;
};

// Runs every search until idle or done, then an epoch, until all are done.
// Answers within a search arrive in an order drawn from `shuffle`. Returns
// the grants of every epoch.
std::vector<std::vector<GlobalAllocator::Grant>> drive(std::vector<Search>& searches,
                                                       GlobalAllocator& alloc, uint64_t shuffle) {
  std::vector<std::vector<GlobalAllocator::Grant>> history;
  SplitMix64 rng(shuffle);
  for (int epoch = 0; epoch < 10000; ++epoch) {
    for (auto& s : searches) {
      std::vector<SampleRequest> pending;
      for (;;) {
        for (auto& r : s.strategy->propose(1000)) pending.push_back(r);
        if (pending.empty()) break;
        size_t pick = shuffle ? rng.next() % pending.size() : 0;
        SampleRequest r = pending[pick];
        pending.erase(pending.begin() + static_cast<long>(pick));
        s.strategy->observe(r.sample_index, s.world.answer(r));
      }
    }
    std::vector<SearchStatus> statuses;
    bool all_done = true;
    for (auto& s : searches) {
      statuses.push_back(s.strategy->status());
      all_done = all_done && statuses.back().done;
    }
    if (all_done) break;
    auto grants = alloc.at_epoch(statuses);
    history.push_back(grants);
    for (auto& g : grants) {
      Budget& b = searches[static_cast<size_t>(g.search)].strategy->budget();
      b.set_limit(g.limit);
      b.set_open(g.open);
    }
  }
  return history;
}

FakeWorld world_with(double p_correct, double speed_step, uint64_t seed) {
  FakeWorld w;
  w.evaluate = [=](const SampleRequest& r) {
    SplitMix64 h(seed * 1000003 + static_cast<uint64_t>(r.sample_index));
    if (static_cast<double>(h.next() % 1000) / 1000.0 >= p_correct) return wrong();
    return correct(1.0 + speed_step * r.sample_index);
  };
  return w;
}

std::vector<Search> make_searches(const GlobalAllocator& alloc, uint64_t seed) {
  std::vector<Search> out;
  auto budget = [&] {
    Budget b(alloc.initial_limit());
    b.set_open(true);
    return b;
  };
  WorkloadBrief brief{"8p", "GEMM", "def workload(a, b): ...\n", ""};
  AutocompConfig beam;
  beam.beam_size = 2;
  beam.plans_per_parent = 2;
  beam.codes_per_plan = 2;
  StrategyMenus menus{{"T"}, {"O"}};
  // 0: hopeless; 1: solved and improving; 2: solved once, then flat; 3: a beam.
  out.push_back({std::make_unique<IterativeSearch>(brief, budget()), world_with(0.0, 0, seed)});
  out.push_back({std::make_unique<IterativeSearch>(brief, budget()), world_with(0.6, 0.05, seed)});
  FakeWorld flat;
  flat.evaluate = [](const SampleRequest& r) {
    return r.sample_index == 0 ? correct(1.3) : wrong();
  };
  out.push_back({std::make_unique<IterativeSearch>(brief, budget()), flat});
  out.push_back({std::make_unique<AutocompSearch>(brief, budget(), beam, menus, seed),
                 world_with(0.5, 0.02, seed + 1)});
  return out;
}

TEST(GlobalAllocatorTest, RunNeverSpendsMoreThanItsTotalAndMovesBudgetToTheLiveSearch) {
  GlobalAllocatorConfig c;
  c.hopeless_after = 6;
  c.saturation_window = 6;
  GlobalAllocator alloc(4, 20, c);
  auto searches = make_searches(alloc, 5);
  auto history = drive(searches, alloc, 0);
  int spent = 0;
  for (auto& s : searches) {
    EXPECT_TRUE(s.strategy->done());
    spent += s.strategy->budget().spent();
  }
  EXPECT_LE(spent, alloc.total());
  EXPECT_GT(alloc.epochs(), 1);
  // The hopeless and the saturated searches stop at their first grant; the
  // two that keep improving share the rest, beyond their even shares of 20.
  EXPECT_EQ(history[0][0].standing, GlobalAllocator::Standing::hopeless);
  EXPECT_EQ(history[0][2].standing, GlobalAllocator::Standing::saturated);
  EXPECT_EQ(searches[0].strategy->budget().spent(), 10);
  EXPECT_EQ(searches[2].strategy->budget().spent(), 10);
  EXPECT_GT(searches[1].strategy->budget().spent(), 20);
  EXPECT_GT(searches[3].strategy->budget().spent(), 20);
  EXPECT_EQ(spent, alloc.total());
}

TEST(GlobalAllocatorTest, ResumedRunMakesTheSameGrants) {
  for (uint64_t seed : {1, 2, 3}) {
    GlobalAllocator a(4, 16, {}), b(4, 16, {});
    auto sa = make_searches(a, seed), sb = make_searches(b, seed);
    auto ha = drive(sa, a, 0);
    auto hb = drive(sb, b, seed * 77 + 1);  // answers in another order
    ASSERT_EQ(ha.size(), hb.size());
    for (size_t e = 0; e < ha.size(); ++e) {
      for (size_t i = 0; i < ha[e].size(); ++i) {
        EXPECT_EQ(ha[e][i].limit, hb[e][i].limit) << "epoch " << e << " search " << i;
        EXPECT_EQ(ha[e][i].open, hb[e][i].open);
      }
    }
  }
}

TEST(GlobalAllocatorTest, NoGrantEverExceedsTheTotalOverRandomRuns) {
  for (uint64_t k = 0; k < 40; ++k) {
    GlobalAllocatorConfig c;
    c.initial_fraction = static_cast<double>(k % 5) / 4.0;
    c.chunk = static_cast<int>(k % 3);
    GlobalAllocator alloc(4, 5 + static_cast<int>(k % 17), c);
    auto searches = make_searches(alloc, k);
    auto history = drive(searches, alloc, k);
    for (auto& epoch : history) {
      int held = 0;
      for (auto& g : epoch) held += g.limit;
      EXPECT_LE(held, alloc.total()) << "case " << k;
    }
    for (auto& s : searches) EXPECT_TRUE(s.strategy->done()) << "case " << k;
  }
}

}  // namespace
}  // namespace palladium
