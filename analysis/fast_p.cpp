#include "analysis/fast_p.hpp"

namespace palladium {

double fast_p(const std::vector<WorkloadSummary>& workloads, double p) {
  if (workloads.empty()) return 0.0;
  int fast = 0;
  for (const auto& w : workloads) fast += w.correct > 0 && w.best_speedup > p;
  return static_cast<double>(fast) / static_cast<double>(workloads.size());
}

}  // namespace palladium
