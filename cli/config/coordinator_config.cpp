#include "cli/config/coordinator_config.hpp"

namespace palladium {

CoordinatorConfig parse_coordinator_config(const ConfigReader& r, const YAML::Node& node) {
  CoordinatorConfig c;
  if (!node) return c;
  r.check_keys(node, "coordinator", {"scheduler_threads"});
  r.get_int(node, "scheduler_threads", "coordinator.scheduler_threads", c.scheduler_threads, 0, 256);
  return c;
}

}  // namespace palladium
