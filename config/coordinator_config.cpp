#include "config/coordinator_config.hpp"

namespace palladium {

CoordinatorConfig parse_coordinator_config(const ConfigReader& r, const YAML::Node& node) {
  CoordinatorConfig c;
  if (!node) return c;
  r.check_keys(node, "coordinator", {"scheduler_threads", "timeouts"});
  r.get_int(node, "scheduler_threads", "coordinator.scheduler_threads", c.scheduler_threads, 0, 256);
  if (const YAML::Node t = node["timeouts"]) {
    r.check_keys(t, "coordinator.timeouts", {"store_s", "llm_s", "run_s", "status_s"});
    // At least a second each: a shorter wait fails healthy peers under load. At most a
    // year (an int of seconds; no run here is near it).
    constexpr int kYear = 366 * 24 * 3600;
    r.get_int(t, "store_s", "coordinator.timeouts.store_s", c.store_timeout_s, 1, kYear);
    r.get_int(t, "llm_s", "coordinator.timeouts.llm_s", c.llm_timeout_s, 1, kYear);
    r.get_int(t, "run_s", "coordinator.timeouts.run_s", c.run_timeout_s, 1, kYear);
    r.get_int(t, "status_s", "coordinator.timeouts.status_s", c.status_timeout_s, 1, kYear);
  }
  return c;
}

}  // namespace palladium
