// Paired comparison of two conditions (A and B) of a sweep, after rliable
// (Agarwal et al. 2021, "Deep RL at the edge of the statistical precipice"):
// point differences A - B, stratified bootstrap intervals, the interquartile
// mean, and the probability of improvement.
//
// Runs are the (workload, seed) cells of analysis/score_grid.hpp, over the
// workloads both suites hold (in A's order).
//
// Stratified bootstrap. Each resample draws, for every workload, as many seeds
// as the condition has, with replacement, from that workload's runs (the
// workloads themselves are fixed strata). When A and B ran the same seeds the
// draw is shared (paired: A's seed-3 run is compared with B's seed-3 run, so
// the noise a seed shares across methods cancels); otherwise A and B are drawn
// independently (unpaired). Draw order, so that an independent implementation
// reproduces every interval exactly: one SplitMix64 (search/rng.hpp) seeded
// with `rng_seed`; for each resample, for each workload in order, A's draws
// (next() % seeds_a, seeds_a times), then, if unpaired, B's (next() % seeds_b,
// seeds_b times). An interval is the (1-level)/2 and (1+level)/2 quantiles of
// the resampled statistic, linearly interpolated (numpy.percentile's default).
//
// Probability of improvement P(A > B): per workload, the chance that a random
// run of A has a higher max(speedup, 1) than a random run of B, ties counting
// one half (the Mann-Whitney U statistic over all seed pairs), averaged over
// workloads. 0.5 means no difference.
//
// Pure and deterministic; no I/O.

#ifndef PALLADIUM_SEARCH_PAIRED_COMPARISON_HPP_
#define PALLADIUM_SEARCH_PAIRED_COMPARISON_HPP_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "search/rng.hpp"
#include "analysis/score_grid.hpp"

namespace palladium {

// Below this many seeds per condition an interval rests on too few runs to mean much.
inline constexpr int kFewSeeds = 5;

struct Difference {
  double a = 0.0, b = 0.0;  // point estimates
  double diff = 0.0;        // a - b
  double low = 0.0, high = 0.0;  // interval of a - b
};

struct Estimate {
  double value = 0.0, low = 0.0, high = 0.0;
};

struct PairedComparison {
  std::vector<std::string> workloads;  // the common suite
  int seeds_a = 0, seeds_b = 0;
  bool paired = false;
  int resamples = 0;
  double level = 0.95;
  Difference correctness, solved, geomean_speedup, iqm_speedup;
  Estimate p_improvement;  // P(A > B) on max(speedup, 1)
  bool few_seeds() const { return seeds_a < kFewSeeds || seeds_b < kFewSeeds; }
};

// P(A > B) over the given selections (see above).
double probability_of_improvement(const ScoreGrid& a, const Selection& sa, const ScoreGrid& b,
                                  const Selection& sb);

// `a` and `b` restricted to the workloads both hold, in a's order.
void restrict_to_common(ScoreGrid& a, ScoreGrid& b);

// Throws std::invalid_argument if a grid has no seed, the suites share no
// workload, resamples < 1 or level is not in (0, 1).
PairedComparison compare_paired(ScoreGrid a, ScoreGrid b, double level = 0.95,
                                int resamples = 2000, uint64_t rng_seed = 0x5eed);

// A stratified bootstrap interval of one condition's statistic, stat(grid,
// selection): the draws above for A alone. With one seed the interval is the
// point.
template <typename Statistic>
Estimate stratified_interval(const ScoreGrid& g, Statistic stat, double level = 0.95,
                             int resamples = 2000, uint64_t rng_seed = 0x5eed);

// The q-quantile of sorted values, linearly interpolated between order statistics.
double sorted_quantile(const std::vector<double>& sorted, double q);

template <typename Statistic>
Estimate stratified_interval(const ScoreGrid& g, Statistic stat, double level, int resamples,
                             uint64_t rng_seed) {
  Estimate e;
  e.value = e.low = e.high = stat(g, all_seeds(g));
  const uint64_t seeds = g.seeds.size();
  if (seeds < 2 || resamples < 1) return e;
  SplitMix64 rng(rng_seed);
  std::vector<double> values;
  values.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    Selection sel(g.workloads.size(), std::vector<int>(seeds));
    for (auto& row : sel)
      for (auto& i : row) i = static_cast<int>(rng.next() % seeds);
    values.push_back(stat(g, sel));
  }
  std::sort(values.begin(), values.end());
  e.low = sorted_quantile(values, (1.0 - level) / 2.0);
  e.high = sorted_quantile(values, (1.0 + level) / 2.0);
  return e;
}

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_PAIRED_COMPARISON_HPP_
