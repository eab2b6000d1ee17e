// The evaluation section of a run config: how every candidate is checked.
//
// YAML:
//   evaluation:
//     backend: interpret       # or tpu
//     timeout_s: 60            # per candidate, (0, 86400]
//     input_seeds: [0, 1]      # distinct
//     require_pallas: true
//     recheck_share: 0.05      # [0, 1]: results re-evaluated by a different agent at random
//     speedup_ceiling: 10      # > 1: a correct result faster than this is re-timed
//     compile_tier: on         # or off: the deviceless libtpu v6e compile of each candidate
//     full_shapes: false       # true: a CPU judge also checks the full-shape program
//
// Owners of the semantics: the sandbox and workloads engineers (judge/, sandbox/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config_reader.hpp"
#include "protocol/evaluation.hpp"

namespace palladium {

struct EvaluationConfig {
  std::string backend = "interpret";
  double timeout_s = 60;
  std::vector<int64_t> input_seeds{0, 1};
  // Off only for experiments that accept plain-JAX rewrites as candidates.
  bool require_pallas = true;
  // The dispatcher's result checks (actors/result_check.hpp, docs/verification.md): the share
  // of results sent to a second agent at random, and the plausibility gate's ceiling.
  double recheck_share = 0.05;
  double speedup_ceiling = 10;
  // How the judge checks every candidate (protocol/evaluation.hpp); each job carries them, and
  // the run's stored config always spells them (fill_judge_settings).
  JudgeSettings judge;
};

// The longest per-candidate timeout accepted: a day. Beyond it the lease
// arithmetic (timeout + grace, in milliseconds) stops meaning anything.
constexpr double kMaxTimeoutS = 86400;

// Reads and validates the `evaluation` mapping (`node` may be null).
EvaluationConfig parse_evaluation_config(const ConfigReader& r, const YAML::Node& node);

// `yaml_text` (whose parsed root is `root`) with evaluation.compile_tier and
// evaluation.full_shapes spelled out, their defaults filled in where the text leaves them out,
// so that a run's stored config says how its candidates were judged. A block-style text keeps
// its lines and comments (the keys are inserted); a flow-style evaluation map is re-emitted.
std::string fill_judge_settings(const std::string& yaml_text, const YAML::Node& root);

}  // namespace palladium
