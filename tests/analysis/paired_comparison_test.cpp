#include "analysis/paired_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace palladium {
namespace {

// A grid from speedups per workload and seed (every run: 1 candidate, correct
// when the speedup is given as > 0, else wrong).
ScoreGrid grid(std::vector<std::string> workloads, std::vector<int64_t> seeds,
               std::vector<std::vector<double>> speedups) {
  ScoreGrid g;
  g.workloads = std::move(workloads);
  g.seeds = std::move(seeds);
  for (const auto& row : speedups) {
    std::vector<RunScore> runs;
    for (double x : row) runs.push_back(x > 0 ? RunScore{1, 1, x} : RunScore{1, 0, 1.0});
    g.runs.push_back(runs);
  }
  return g;
}

TEST(PairedComparison, ProbabilityOfImprovementByHand) {
  auto a = grid({"w1", "w2"}, {0, 1}, {{2.0, 1.0}, {1.0, 1.0}});
  auto b = grid({"w1", "w2"}, {0, 1}, {{1.0, 1.0}, {3.0, 1.0}});
  // w1: pairs (2,1) (2,1) win, (1,1) (1,1) tie: 3/4. w2: (1,3) (1,3) lose, two ties: 1/4.
  EXPECT_DOUBLE_EQ(probability_of_improvement(a, all_seeds(a), b, all_seeds(b)), 0.5);
  // A correct kernel slower than XLA ties with an unsolved one (both count as 1.0x).
  auto slow = grid({"w"}, {0}, {{0.5}});
  auto none = grid({"w"}, {0}, {{-1}});
  EXPECT_DOUBLE_EQ(probability_of_improvement(slow, all_seeds(slow), none, all_seeds(none)), 0.5);
}

TEST(PairedComparison, SameGridsDifferByExactlyNothing) {
  auto a = grid({"w1", "w2"}, {0, 1, 2}, {{2.0, 1.5, -1}, {1.2, -1, 3.0}});
  auto c = compare_paired(a, a, 0.95, 500);
  EXPECT_TRUE(c.paired);
  for (const auto* d : {&c.correctness, &c.solved, &c.geomean_speedup, &c.iqm_speedup}) {
    EXPECT_DOUBLE_EQ(d->diff, 0.0);
    EXPECT_DOUBLE_EQ(d->low, 0.0);  // the shared draws cancel in every resample
    EXPECT_DOUBLE_EQ(d->high, 0.0);
  }
  EXPECT_DOUBLE_EQ(c.p_improvement.value, 0.5);
  EXPECT_TRUE(c.few_seeds());
}

TEST(PairedComparison, PairingCancelsSeedNoiseThatUnpairedDrawsKeep) {
  // A is B times 1.1 on every run, while seeds differ by a lot: paired, every
  // resample sees A ahead; with B's seeds renamed (unpaired) it does not.
  std::vector<std::vector<double>> bx = {{1.5, 4.0, 2.0, 8.0, 3.0}, {2.0, 6.0, 1.5, 3.0, 5.0}};
  auto ax = bx;
  for (auto& row : ax)
    for (auto& x : row) x *= 1.1;
  auto a = grid({"w1", "w2"}, {0, 1, 2, 3, 4}, ax);
  auto b = grid({"w1", "w2"}, {0, 1, 2, 3, 4}, bx);
  auto paired = compare_paired(a, b, 0.95, 1000);
  EXPECT_TRUE(paired.paired);
  EXPECT_FALSE(paired.few_seeds());
  EXPECT_GT(paired.geomean_speedup.low, 0.0);
  EXPECT_NEAR(paired.geomean_speedup.diff,
              paired.geomean_speedup.b * 0.1, 1e-9);  // geomean of 1.1 x B
  // Each workload: A beats 15 of the 25 seed pairs (1.1x of B is above B's own run and below
  // its next-larger one).
  EXPECT_DOUBLE_EQ(paired.p_improvement.value, 15.0 / 25);
  auto b_other = b;
  b_other.seeds = {10, 11, 12, 13, 14};
  auto unpaired = compare_paired(a, b_other, 0.95, 1000);
  EXPECT_FALSE(unpaired.paired);
  EXPECT_LT(unpaired.geomean_speedup.low, 0.0);
  EXPECT_DOUBLE_EQ(unpaired.geomean_speedup.diff, paired.geomean_speedup.diff);
}

// The draws, written out again from the header's description, for one workload.
TEST(PairedComparison, IntervalsFollowTheDocumentedDraws) {
  auto a = grid({"w"}, {0, 1, 2}, {{2.0, -1, 4.0}});
  auto b = grid({"w"}, {0, 1, 2}, {{1.0, 3.0, 1.0}});
  const int resamples = 200;
  auto c = compare_paired(a, b, 0.9, resamples, 42);
  SplitMix64 rng(42);
  std::vector<double> diffs;
  for (int r = 0; r < resamples; ++r) {
    double la = 0, lb = 0;
    for (int j = 0; j < 3; ++j) {
      int s = static_cast<int>(rng.next() % 3);
      la += std::log(std::max(a.runs[0][s].speedup, 1.0));
      lb += std::log(std::max(b.runs[0][s].speedup, 1.0));
    }
    diffs.push_back(std::exp(la / 3) - std::exp(lb / 3));
  }
  std::sort(diffs.begin(), diffs.end());
  auto q = [&](double p) {
    double pos = p * (diffs.size() - 1);
    size_t lo = static_cast<size_t>(pos);
    return diffs[lo] + (pos - lo) * (diffs[std::min(lo + 1, diffs.size() - 1)] - diffs[lo]);
  };
  EXPECT_DOUBLE_EQ(c.geomean_speedup.low, q(0.05));
  EXPECT_DOUBLE_EQ(c.geomean_speedup.high, q(0.95));
  EXPECT_DOUBLE_EQ(c.geomean_speedup.diff, std::cbrt(8.0) - std::cbrt(3.0));
}

TEST(PairedComparison, ComparesTheCommonWorkloadsAndRefusesNone) {
  auto a = grid({"w1", "w2"}, {0}, {{2.0}, {1.0}});
  auto b = grid({"w2", "w3"}, {0}, {{1.0}, {5.0}});
  auto c = compare_paired(a, b, 0.95, 10);
  EXPECT_EQ(c.workloads, (std::vector<std::string>{"w2"}));
  auto d = grid({"w9"}, {0}, {{1.0}});
  EXPECT_THROW(compare_paired(a, d), std::invalid_argument);
  EXPECT_THROW(compare_paired(a, b, 1.5), std::invalid_argument);
}

TEST(PairedComparison, StratifiedIntervalOfOneCondition) {
  auto g = grid({"w1", "w2"}, {0, 1}, {{2.0, -1}, {-1, -1}});
  auto e = stratified_interval(g, grid_solved, 0.95, 400);
  EXPECT_DOUBLE_EQ(e.value, 0.5);
  EXPECT_DOUBLE_EQ(e.low, 0.0);   // some resamples draw seed 1 twice for w1
  EXPECT_DOUBLE_EQ(e.high, 1.0);  // and some seed 0 twice
  auto one = grid({"w1"}, {0}, {{2.0}});
  auto p = stratified_interval(one, grid_geomean);
  EXPECT_DOUBLE_EQ(p.low, 2.0);
  EXPECT_DOUBLE_EQ(p.high, 2.0);
}

}  // namespace
}  // namespace palladium
