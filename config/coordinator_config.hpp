// The coordinator section of a run config: how the coordinator process itself
// is sized.
//
// YAML:
//   coordinator:
//     scheduler_threads: 0   # CAF scheduler threads; 0 = one per core
//     timeouts:              # how long an actor waits for a peer's answer, in seconds
//       store_s: 120         #   a store read or write
//       llm_s: 3600          #   an LLM sample, queueing and retries included
//       run_s: 604800        #   a whole run (a sweep's wait for a cell)
//       status_s: 5          #   a status poll for the progress line
// A request that waits longer fails with deadline_exceeded (actors/request_timeouts.hpp).
//
// CAF's own default is max(cores, 4); on a 2-core host the extra threads cost
// request latency (notes/cpp_stack.md §3), hence one per core.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config_reader.hpp"

namespace palladium {

struct CoordinatorConfig {
  int scheduler_threads = 0;  // 0: std::thread::hardware_concurrency()
  // Request timeouts in seconds; the defaults are RequestTimeouts' (actors/request_timeouts.hpp).
  int store_timeout_s = 120;
  int llm_timeout_s = 3600;
  int run_timeout_s = 7 * 24 * 3600;
  int status_timeout_s = 5;
};

// Reads and validates the `coordinator` mapping (`node` may be null).
CoordinatorConfig parse_coordinator_config(const ConfigReader& r, const YAML::Node& node);

}  // namespace palladium
