// The roofline fraction of a timed kernel: how close it runs to what the chip
// can do for the work the workload needs (KernelBench-Hard's peak_fraction).
//
//   floor time = max(FLOPs / peak FLOP/s, bytes / peak HBM bytes/s)
//   fraction   = floor time / measured time      (1.0 = on the roof)
//
// The binding roof is the larger term: "compute" or "memory". FLOPs and bytes
// are the workload's (WorkloadCost: the baseline's FLOPs
// and the bytes of its inputs and output at the full shapes, which any kernel
// must move at least once), never the candidate's own, so a kernel that skips
// work shows a fraction above 1.0 instead of a good one.
//
// The peaks are TPU v6e's, one chip, as workloads/context/hardware.md states
// them: 918 TFLOP/s bf16 on the MXU and 1.64 TB/s of HBM bandwidth. A time
// measured on a CPU host (timing kind cpu-wall, at reduced shapes) gives a
// number that means nothing; callers say so and keep it out of headlines.
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_ROOFLINE_HPP_
#define PALLADIUM_SEARCH_ROOFLINE_HPP_

#include <string>

namespace palladium {

struct WorkloadCost {
  double flops = 0.0;  // of the workload at its full shapes
  double bytes = 0.0;  // its inputs plus its output at the full shapes
};

struct ChipPeaks {
  const char* name;
  double flops_per_s;
  double bytes_per_s;
};

// workloads/context/hardware.md: "Peak 918 TFLOP/s bf16", "HBM: 32 GB, 1.64 TB/s".
inline constexpr ChipPeaks kTpuV6e{"TPU v6e", 918e12, 1.64e12};

struct RooflinePoint {
  double fraction = 0.0;
  double floor_ms = 0.0;  // no kernel can be faster than this
  std::string bound;      // "compute" or "memory"
};

// Throws std::invalid_argument unless time_ms > 0 and the cost has some work.
RooflinePoint roofline_fraction(const WorkloadCost& cost, double time_ms,
                                const ChipPeaks& peaks = kTpuV6e);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_ROOFLINE_HPP_
