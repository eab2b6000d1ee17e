#include "search/roofline.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace palladium {

RooflinePoint roofline_fraction(const WorkloadCost& cost, double time_ms, const ChipPeaks& peaks) {
  if (!(time_ms > 0.0) || !std::isfinite(time_ms))
    throw std::invalid_argument("roofline_fraction: the measured time must be > 0 ms, not " +
                                std::to_string(time_ms));
  if (!(cost.flops >= 0.0) || !(cost.bytes >= 0.0) || cost.flops + cost.bytes <= 0.0)
    throw std::invalid_argument("roofline_fraction: the workload's FLOPs and bytes must be >= 0 "
                                "and not both 0");
  const double compute_s = cost.flops / peaks.flops_per_s;
  const double memory_s = cost.bytes / peaks.bytes_per_s;
  RooflinePoint p;
  p.bound = compute_s >= memory_s ? "compute" : "memory";
  p.floor_ms = 1e3 * (compute_s >= memory_s ? compute_s : memory_s);
  p.fraction = p.floor_ms / time_ms;
  return p;
}

}  // namespace palladium
