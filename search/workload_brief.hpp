// What a search strategy knows about the workload it writes kernels for.

#ifndef PALLADIUM_SEARCH_WORKLOAD_BRIEF_HPP_
#define PALLADIUM_SEARCH_WORKLOAD_BRIEF_HPP_

#include <string>

namespace palladium {

struct WorkloadBrief {
  std::string id;               // e.g. "8p"
  std::string name;             // e.g. "GEMM"
  std::string baseline_source;  // text of workloads/wl_<id>.py
  // The assembled context blocks (TPU v6e summary, Pallas API reference,
  // examples, rules) for the iterative+context method. The caller loads them
  // from workloads/; search/ does no IO. Ignored unless a strategy is built
  // with_context.
  std::string context;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_WORKLOAD_BRIEF_HPP_
