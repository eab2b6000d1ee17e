// The context section of a run config: which context blocks a prompt may carry.
//
// YAML:
//   context:
//     blocks: [hardware, api, examples, rules]   # the default: all four
//
// The blocks are assembled per workload from workloads/context/
// (llm/context_blocks.hpp) into WorkloadBrief::context. Whether a prompt
// carries them is the method's business: iterative_context always does,
// iterative never. `blocks: []` is refused for iterative_context.
//
// Owner of the semantics: the synth engineer (workloads/context/, llm/context_blocks*).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config_reader.hpp"
#include "llm/context_blocks.hpp"

namespace palladium {

struct ContextConfig {
  std::vector<std::string> blocks = context_block_names();
};

// Reads and validates the `context` mapping (`node` may be null: all
// defaults). `method` is the config's search method. Throws ConfigError.
ContextConfig parse_context_config(const ConfigReader& r, const YAML::Node& node,
                                   const std::string& method);

// Loads the context blocks under `home`/workloads/context and checks every
// one of `workloads` has tags. Throws ConfigError naming context.blocks.
ContextLibrary load_context_library(const ConfigReader& r, const std::filesystem::path& home,
                                    const std::vector<std::string>& workloads);

}  // namespace palladium
