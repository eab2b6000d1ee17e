// Percentile bootstrap confidence interval of a mean.
//
// Resamples `values` with replacement `resamples` times and returns the
// (1-level)/2 and (1+level)/2 quantiles of the resampled means, with the
// plain mean. Deterministic: the resampling RNG is splitmix64 seeded with
// `rng_seed`, so the same values give the same interval on every machine.
// With one value the interval is that value; with none, everything is NaN.
// With few values (e.g. 2 seeds) the interval is coarse (for two values it
// spans them): it is what the data support, not a defect.
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_BOOTSTRAP_HPP_
#define PALLADIUM_SEARCH_BOOTSTRAP_HPP_

#include <cstdint>
#include <vector>

namespace palladium {

struct MeanInterval {
  double mean = 0.0;
  double low = 0.0;
  double high = 0.0;
  int n = 0;  // values the mean is over
};

MeanInterval bootstrap_mean(const std::vector<double>& values, double level = 0.95,
                            int resamples = 2000, uint64_t rng_seed = 0x5eed);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_BOOTSTRAP_HPP_
