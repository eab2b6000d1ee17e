// The search section of a run config: which method, and what it may spend.
//
// YAML (top level today; method parameters and `budget:` keys belong here):
//   method: iterative
//   budget_per_workload: 8      # samples per workload and seed
//
// Owner of the semantics: the search engineer (search/). Add a method's
// parameters as fields here and their keys in parse_search_config().
#pragma once

#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "cli/config/config_reader.hpp"

namespace palladium {

struct SearchConfig {
  std::string method = "iterative";
  int budget_per_workload = 8;
};

// The top-level keys this section reads.
const std::set<std::string>& search_config_keys();

// Reads this section's keys from the config's root mapping and validates them.
// Throws ConfigError naming the key.
SearchConfig parse_search_config(const ConfigReader& r, const YAML::Node& root);

}  // namespace palladium
