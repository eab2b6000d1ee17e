// The llm section of a run config: who writes the candidates.
//
// YAML:
//   llm:
//     provider: replay            # the offline recorded-response provider, or
//                                 # hand_tuned: each workload's hand-tuned reference
//                                 # (workloads/hand_tuned/), to time the references
//     corpus: llm/replay_corpus   # relative to PALLADIUM_HOME (replay only)
//
// Owner of the semantics: the llm engineer (llm/, actors/llm_gateway*).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/config/config_reader.hpp"

namespace palladium {

struct LlmConfig {
  std::string provider = "replay";
  std::string corpus = "llm/replay_corpus";  // relative to PALLADIUM_HOME
};

// Reads and validates the `llm` mapping (`node` may be null: all defaults).
LlmConfig parse_llm_config(const ConfigReader& r, const YAML::Node& node);

// Checks what the section names on disk before anything is started or
// stored: for the replay provider, that the corpus directory exists under
// `home` and holds a directory for each of `workloads`; for hand_tuned, that
// each workload has a reference. Throws ConfigError
// naming llm.corpus and the missing path.
void check_llm_files(const ConfigReader& r, const LlmConfig& c, const std::filesystem::path& home,
                     const std::vector<std::string>& workloads);

}  // namespace palladium
