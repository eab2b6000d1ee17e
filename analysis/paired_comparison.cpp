#include "analysis/paired_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace palladium {

double sorted_quantile(const std::vector<double>& v, double q) {
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double probability_of_improvement(const ScoreGrid& a, const Selection& sa, const ScoreGrid& b,
                                  const Selection& sb) {
  if (a.workloads.empty()) return 0.5;
  double total = 0.0;
  for (size_t w = 0; w < a.workloads.size(); ++w) {
    double wins = 0.0;
    for (int i : sa[w])
      for (int j : sb[w]) {
        double x = std::max(a.runs[w][static_cast<size_t>(i)].speedup, 1.0);
        double y = std::max(b.runs[w][static_cast<size_t>(j)].speedup, 1.0);
        wins += x > y ? 1.0 : x == y ? 0.5 : 0.0;
      }
    total += wins / static_cast<double>(sa[w].size() * sb[w].size());
  }
  return total / static_cast<double>(a.workloads.size());
}

void restrict_to_common(ScoreGrid& a, ScoreGrid& b) {
  ScoreGrid ca, cb;
  ca.seeds = a.seeds;
  cb.seeds = b.seeds;
  for (size_t i = 0; i < a.workloads.size(); ++i) {
    auto it = std::find(b.workloads.begin(), b.workloads.end(), a.workloads[i]);
    if (it == b.workloads.end()) continue;
    ca.workloads.push_back(a.workloads[i]);
    ca.runs.push_back(a.runs[i]);
    cb.workloads.push_back(*it);
    cb.runs.push_back(b.runs[static_cast<size_t>(it - b.workloads.begin())]);
  }
  a = std::move(ca);
  b = std::move(cb);
}

namespace {

Difference difference(double a, double b, std::vector<double>& diffs, double level) {
  Difference d;
  d.a = a;
  d.b = b;
  d.diff = a - b;
  std::sort(diffs.begin(), diffs.end());
  d.low = sorted_quantile(diffs, (1.0 - level) / 2.0);
  d.high = sorted_quantile(diffs, (1.0 + level) / 2.0);
  return d;
}

}  // namespace

PairedComparison compare_paired(ScoreGrid a, ScoreGrid b, double level, int resamples,
                                uint64_t rng_seed) {
  if (a.seeds.empty() || b.seeds.empty())
    throw std::invalid_argument("compare_paired: a condition has no evaluated seed");
  if (resamples < 1) throw std::invalid_argument("compare_paired: resamples must be >= 1");
  if (!(level > 0.0 && level < 1.0))
    throw std::invalid_argument("compare_paired: level must be in (0, 1)");
  restrict_to_common(a, b);
  if (a.workloads.empty())
    throw std::invalid_argument("compare_paired: the two suites share no workload");

  PairedComparison out;
  out.workloads = a.workloads;
  out.seeds_a = static_cast<int>(a.seeds.size());
  out.seeds_b = static_cast<int>(b.seeds.size());
  out.paired = a.seeds == b.seeds;
  out.resamples = resamples;
  out.level = level;

  using Stat = double (*)(const ScoreGrid&, const Selection&);
  const Stat stats[] = {grid_correctness, grid_solved, grid_geomean, grid_iqm};
  std::vector<double> diffs[4], poi;
  SplitMix64 rng(rng_seed);
  for (int r = 0; r < resamples; ++r) {
    Selection sa(a.workloads.size()), sb(a.workloads.size());
    for (size_t w = 0; w < a.workloads.size(); ++w) {
      for (int j = 0; j < out.seeds_a; ++j)
        sa[w].push_back(static_cast<int>(rng.next() % static_cast<uint64_t>(out.seeds_a)));
      if (out.paired) {
        sb[w] = sa[w];
      } else {
        for (int j = 0; j < out.seeds_b; ++j)
          sb[w].push_back(static_cast<int>(rng.next() % static_cast<uint64_t>(out.seeds_b)));
      }
    }
    for (int m = 0; m < 4; ++m) diffs[m].push_back(stats[m](a, sa) - stats[m](b, sb));
    poi.push_back(probability_of_improvement(a, sa, b, sb));
  }
  const Selection all_a = all_seeds(a), all_b = all_seeds(b);
  Difference* targets[] = {&out.correctness, &out.solved, &out.geomean_speedup, &out.iqm_speedup};
  for (int m = 0; m < 4; ++m)
    *targets[m] = difference(stats[m](a, all_a), stats[m](b, all_b), diffs[m], level);
  std::sort(poi.begin(), poi.end());
  out.p_improvement = {probability_of_improvement(a, all_a, b, all_b),
                       sorted_quantile(poi, (1.0 - level) / 2.0),
                       sorted_quantile(poi, (1.0 + level) / 2.0)};
  return out;
}

}  // namespace palladium
