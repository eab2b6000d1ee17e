// The search section of a run config: which method, its parameters, what it
// may spend and how the budget is split (search/method_config.hpp,
// search/phase_policy.hpp, search/global_allocator.hpp hold the semantics).
//
// YAML (every key optional except as noted; defaults shown):
//   method: iterative            # iterative | iterative_context | autocomp
//   budget_per_workload: 8       # units per workload and seed (>= 1)
//   budget:
//     counts: candidates         # candidates (code + repair) | calls (every LLM call)
//     phase_policy: fixed_fraction   # autocomp: fixed_fraction | adaptive
//     translate_fraction: 0.5    # fixed_fraction: share translation may spend, [0, 1]
//     seeds: 1                   # adaptive: correct seeds before optimising
//     max_translate_fraction: 1.0    # adaptive: cap on translation, [0, 1]
//     early_stop: {window: 0, threshold: 1.0}   # Autocomp's rule; window 0 = off
//     global:                    # reallocation across workloads (any method)
//       enabled: false
//       initial_fraction: 0.5
//       hopeless_after: 0        # 0: budget_per_workload
//       saturation_window: 0     # 0: budget_per_workload / 2
//       chunk: 0                 # 0: budget_per_workload / 4
//   autocomp:                    # method autocomp (Autocomp's defaults)
//     beam: 4, plans: 4, codes: 2, menu_keep: 0.25, menu_one_shot: true,
//     menu_new_strategies: 10, translate_score: true, translate_exit_score: 9.0,
//     translate_drop_root: true, translate_perf_threshold: 15,
//     keep_factor_early: 1.1, keep_factor_early_generations: 2, keep_factor: 1.0,
//     dedup_level: 0, repair: false, context: false,
//     translate_menu: translate, optimise_menu: optimise   # workloads/context/menus/<name>.yaml
//   pipeline:
//     in_flight_per_slot: 2      # bounded oversubscription: samples in flight per free eval slot
//
// Owner of the semantics: the search engineer (search/).
#pragma once

#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "config/config_reader.hpp"
#include "search/global_allocator.hpp"
#include "search/method_config.hpp"

namespace palladium {

struct SearchConfig {
  std::string method = "iterative";
  int budget_per_workload = 8;
  MethodConfig method_config;  // method_config.method == method
  bool global_enabled = false;
  GlobalAllocatorConfig global;
  std::string translate_menu = "translate";
  std::string optimise_menu = "optimise";
  int in_flight_per_slot = 2;
};

// The top-level keys this section reads.
const std::set<std::string>& search_config_keys();

// Reads this section's keys from the config's root mapping and validates them.
// Throws ConfigError naming the key.
SearchConfig parse_search_config(const ConfigReader& r, const YAML::Node& root);

}  // namespace palladium
