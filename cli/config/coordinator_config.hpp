// The coordinator section of a run config: how the coordinator process itself
// is sized.
//
// YAML:
//   coordinator:
//     scheduler_threads: 0   # CAF scheduler threads; 0 = one per core
//
// CAF's own default is max(cores, 4); on a 2-core host the extra threads cost
// request latency (notes/cpp_stack.md §3), hence one per core.
#pragma once

#include <yaml-cpp/yaml.h>

#include "cli/config/config_reader.hpp"

namespace palladium {

struct CoordinatorConfig {
  int scheduler_threads = 0;  // 0: std::thread::hardware_concurrency()
};

// Reads and validates the `coordinator` mapping (`node` may be null).
CoordinatorConfig parse_coordinator_config(const ConfigReader& r, const YAML::Node& node);

}  // namespace palladium
