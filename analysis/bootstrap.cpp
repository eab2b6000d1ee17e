#include "analysis/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "search/rng.hpp"

namespace palladium {
namespace {

// The q-quantile of sorted `v` by linear interpolation between order statistics.
double quantile(const std::vector<double>& v, double q) {
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

MeanInterval bootstrap_mean(const std::vector<double>& values, double level, int resamples,
                            uint64_t rng_seed) {
  MeanInterval out;
  out.n = static_cast<int>(values.size());
  if (values.empty()) {
    out.mean = out.low = out.high = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  out.mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  if (values.size() == 1 || resamples < 1) {
    out.low = out.high = out.mean;
    return out;
  }
  SplitMix64 rng(rng_seed);
  std::vector<double> means;
  means.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    double sum = 0.0;
    for (size_t i = 0; i < values.size(); ++i) sum += values[rng.next() % values.size()];
    means.push_back(sum / values.size());
  }
  std::sort(means.begin(), means.end());
  out.low = quantile(means, (1.0 - level) / 2.0);
  out.high = quantile(means, (1.0 + level) / 2.0);
  return out;
}

}  // namespace palladium
