// MethodConfig: a search method and its parameters as a run config states
// them (config/search_config.* reads the YAML into it), and
// make_strategy(), the one place a Strategy is built from it.
//
//   iterative          IterativeSearch, no context
//   iterative_context  IterativeSearch with brief.context in every system prompt
//   autocomp           AutocompSearch (two-phase beam), context if
//                      autocomp.with_context
//
// Errors: make_strategy throws std::invalid_argument naming what is wrong
// (an unknown method, a missing context or menu, a bad parameter).

#ifndef PALLADIUM_SEARCH_METHOD_CONFIG_HPP_
#define PALLADIUM_SEARCH_METHOD_CONFIG_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "search/autocomp_search.hpp"
#include "search/budget.hpp"
#include "search/early_stop.hpp"
#include "search/strategy.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct MethodConfig {
  std::string method = "iterative";
  BudgetCounts counts = BudgetCounts::candidates;
  EarlyStopRule early_stop;  // applies to every method
  AutocompConfig autocomp;   // autocomp only; its early_stop is set from the above
};

// "iterative", "iterative_context", "autocomp".
const std::vector<std::string>& method_names();

// True when the method's prompts carry the context blocks (the caller must
// then fill brief.context).
bool method_uses_context(const MethodConfig& config);

// True when the method asks for plans from the strategy menus.
bool method_uses_menus(const MethodConfig& config);

// A new strategy for one search. `menus` is read only by autocomp.
std::unique_ptr<Strategy> make_strategy(const MethodConfig& config, WorkloadBrief brief,
                                        Budget budget, StrategyMenus menus, uint64_t seed);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_METHOD_CONFIG_HPP_
