#include "analysis/score_grid.hpp"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace palladium {
namespace {

const auto ok = Verdict::correct, bad = Verdict::numerics_mismatch;

// Two workloads x two seeds; the runs are
//   a/seed0: 2 candidates, 1 correct, 2.0x    a/seed1: 2, 1 correct, 4.0x
//   b/seed0: 2, 0 correct (1.0)                b/seed1: 2, 2 correct, best 0.5x
std::vector<SeedTrajectories> two_by_two() {
  SeedTrajectories s0, s1;
  s0.seed = 0;
  s1.seed = 1;
  s0.suite = s1.suite = {"a", "b"};
  s0.by_workload["a"] = {{bad, {}}, {ok, 2.0}};
  s0.by_workload["b"] = {{bad, {}}, {bad, {}}};
  s1.by_workload["a"] = {{ok, 4.0}, {bad, {}}};
  s1.by_workload["b"] = {{ok, 0.5}, {ok, {}}};
  return {s0, s1};
}

TEST(ScoreGrid, RunsPerWorkloadAndSeed) {
  auto g = score_grid(two_by_two());
  ASSERT_EQ(g.workloads, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(g.seeds, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(g.runs[0][1].correct, 1);
  EXPECT_DOUBLE_EQ(g.runs[0][1].speedup, 4.0);
  EXPECT_DOUBLE_EQ(g.runs[1][0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(g.runs[1][1].speedup, 0.5);
}

TEST(ScoreGrid, StatisticsOverEverySeedByHand) {
  auto g = score_grid(two_by_two());
  auto all = all_seeds(g);
  EXPECT_DOUBLE_EQ(grid_correctness(g, all), 4.0 / 8);
  EXPECT_DOUBLE_EQ(grid_solved(g, all), 2 * ((1.0 + 1.0) / 2 + (0.0 + 1.0) / 2) / 2);
  EXPECT_DOUBLE_EQ(grid_geomean(g, all), std::pow(2.0, 0.75));  // exp(((ln2+ln4)/2 + 0)/2)
  EXPECT_DOUBLE_EQ(grid_iqm(g, all), 1.5);  // clipped 1,1,2,4: the middle two
  EXPECT_DOUBLE_EQ(grid_pass_at_k(g, all, 1), (0.5 + 0.5) / 2);  // a: .5,.5; b: 0, 1
  EXPECT_DOUBLE_EQ(grid_pass_at_k(g, all, 2), (1.0 + 0.5) / 2);
  EXPECT_TRUE(pass_at_k_defined(g, 2));
  EXPECT_FALSE(pass_at_k_defined(g, 3));
  EXPECT_DOUBLE_EQ(grid_fast_p(g, all, 0.0), (1.0 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(grid_fast_p(g, all, 1.0), (1.0 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(grid_fast_p(g, all, 3.0), (0.5 + 0.0) / 2);
}

TEST(ScoreGrid, ASelectionRepeatsSeedsPerWorkload) {
  auto g = score_grid(two_by_two());
  Selection sel = {{1, 1}, {0, 0}};  // a: seed 1 twice; b: seed 0 twice
  EXPECT_DOUBLE_EQ(grid_geomean(g, sel), 2.0);  // exp((ln4 + 0) / 2)
  EXPECT_DOUBLE_EQ(grid_solved(g, sel), 1.0);
  EXPECT_DOUBLE_EQ(grid_correctness(g, sel), 2.0 / 8);
}

TEST(ScoreGrid, InterquartileMeanTrimsAQuarterEachSide) {
  EXPECT_DOUBLE_EQ(interquartile_mean({8, 1, 7, 2, 6, 3, 5, 4}), 4.5);  // 3,4,5,6
  EXPECT_DOUBLE_EQ(interquartile_mean({100, 1, 2, 3, 4}), 3.0);        // 2,3,4
  EXPECT_DOUBLE_EQ(interquartile_mean({7}), 7.0);
  EXPECT_TRUE(std::isnan(interquartile_mean({})));
}

TEST(ScoreGrid, RefusesSeedsWithDifferentSuites) {
  auto seeds = two_by_two();
  seeds[1].suite = {"a"};
  EXPECT_THROW(score_grid(seeds), std::invalid_argument);
  EXPECT_THROW(score_grid({}), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
