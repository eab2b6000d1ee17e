#include "search/method_config.hpp"

#include <stdexcept>
#include <utility>

#include "search/iterative_search.hpp"

namespace palladium {

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names{"iterative", "iterative_context", "autocomp"};
  return names;
}

bool method_uses_context(const MethodConfig& c) {
  return c.method == "iterative_context" || (c.method == "autocomp" && c.autocomp.with_context);
}

bool method_uses_menus(const MethodConfig& c) { return c.method == "autocomp"; }

std::unique_ptr<Strategy> make_strategy(const MethodConfig& c, WorkloadBrief brief, Budget budget,
                                        StrategyMenus menus, uint64_t seed) {
  if (c.method == "iterative" || c.method == "iterative_context") {
    IterativeConfig ic;
    ic.with_context = c.method == "iterative_context";
    ic.early_stop = c.early_stop;
    return std::make_unique<IterativeSearch>(std::move(brief), std::move(budget), ic);
  }
  if (c.method == "autocomp") {
    AutocompConfig ac = c.autocomp;
    ac.early_stop = c.early_stop;
    return std::make_unique<AutocompSearch>(std::move(brief), std::move(budget), ac,
                                            std::move(menus), seed);
  }
  std::string known;
  for (const auto& n : method_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown method '" + c.method + "' (available: " + known + ")");
}

}  // namespace palladium
