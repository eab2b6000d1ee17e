// The evaluation section of a run config: how every candidate is checked.
//
// YAML:
//   evaluation:
//     backend: interpret       # or tpu
//     timeout_s: 60            # per candidate, (0, 86400]
//     input_seeds: [0, 1]      # distinct
//     require_pallas: true
//
// Owners of the semantics: the sandbox and workloads engineers (judge/, sandbox/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/config/config_reader.hpp"

namespace palladium {

struct EvaluationConfig {
  std::string backend = "interpret";
  double timeout_s = 60;
  std::vector<int64_t> input_seeds{0, 1};
  // Off only for experiments that accept plain-JAX rewrites as candidates.
  bool require_pallas = true;
};

// The longest per-candidate timeout accepted: a day. Beyond it the lease
// arithmetic (timeout + grace, in milliseconds) stops meaning anything.
constexpr double kMaxTimeoutS = 86400;

// Reads and validates the `evaluation` mapping (`node` may be null).
EvaluationConfig parse_evaluation_config(const ConfigReader& r, const YAML::Node& node);

}  // namespace palladium
