#include "cli/config/evaluation_config.hpp"

namespace palladium {

EvaluationConfig parse_evaluation_config(const ConfigReader& r, const YAML::Node& node) {
  EvaluationConfig c;
  if (!node) return c;
  r.check_keys(node, "evaluation",
               {"backend", "timeout_s", "input_seeds", "require_pallas", "recheck_share",
                "speedup_ceiling"});
  r.get(node, "backend", "evaluation.backend", c.backend);
  r.get_number(node, "timeout_s", "evaluation.timeout_s", c.timeout_s, 0, kMaxTimeoutS);
  r.get_distinct(node, "input_seeds", "evaluation.input_seeds", c.input_seeds);
  r.get(node, "require_pallas", "evaluation.require_pallas", c.require_pallas);
  r.get_number(node, "recheck_share", "evaluation.recheck_share", c.recheck_share, 0, 1);
  r.get_number(node, "speedup_ceiling", "evaluation.speedup_ceiling", c.speedup_ceiling, 1,
               1e9);
  if (!(c.speedup_ceiling > 1)) r.fail("evaluation.speedup_ceiling", "must be > 1");
  if (c.backend != "interpret" && c.backend != "tpu")
    r.fail("evaluation.backend", "must be 'interpret' or 'tpu', not '" + c.backend + "'");
  if (!(c.timeout_s > 0)) r.fail("evaluation.timeout_s", "must be > 0");
  if (c.input_seeds.empty()) r.fail("evaluation.input_seeds", "must list at least one seed");
  return c;
}

}  // namespace palladium
