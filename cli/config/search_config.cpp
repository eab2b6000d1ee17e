#include "cli/config/search_config.hpp"

namespace palladium {

const std::set<std::string>& search_config_keys() {
  static const std::set<std::string> keys{
      "method",
      "budget_per_workload",
  };
  return keys;
}

SearchConfig parse_search_config(const ConfigReader& r, const YAML::Node& root) {
  SearchConfig c;
  r.get(root, "method", "method", c.method);
  // An upper bound keeps budget arithmetic (samples x workloads x seeds) in int range.
  r.get_int(root, "budget_per_workload", "budget_per_workload", c.budget_per_workload, 1, 100000);
  if (c.method != "iterative")
    r.fail("method", "'" + c.method + "' is not implemented (available: iterative)");
  return c;
}

}  // namespace palladium
