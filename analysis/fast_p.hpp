// fast_p (KernelBench): the share of the suite's workloads whose best correct
// kernel is faster than the baseline by more than a factor p,
//
//   fast_p = |{w : w has a correct candidate and speedup(w) > p}| / |suite|
//
// with speedup(w) as analysis/metrics.hpp defines it (1.0 for a correct kernel
// that was never timed). fast_0 is therefore solved / |suite|; fast_1.0 counts
// the workloads where the kernel beats XLA at all.
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_FAST_P_HPP_
#define PALLADIUM_SEARCH_FAST_P_HPP_

#include <vector>

#include "analysis/metrics.hpp"

namespace palladium {

// The thresholds the report states.
inline const std::vector<double> kFastP = {0.0, 1.0, 1.2, 1.5, 2.0};

// 0 for an empty suite.
double fast_p(const std::vector<WorkloadSummary>& workloads, double p);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_FAST_P_HPP_
