// What `palladium policy-eval` reports: for each condition of a sweep, what other budget
// policies would have achieved on its recorded trajectories (analysis/policy_replay.hpp), with
// no LLM call and no evaluation; each estimate says whether it is exact, the recorded prefixes
// of a method that depends on its budget, or a lower bound.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/policy_replay.hpp"
#include "report/sweep_report.hpp"

namespace palladium {

// One --policy: a point ("prefix:4") or a family ("realloc,patience=1": the curve over K).
struct PolicyRequest {
  std::string spec;
  bool curve = false;  // vary K over 1..longest
  ReplayPolicy policy;
};

// Throws std::invalid_argument naming what is wrong with `spec`.
PolicyRequest parse_policy_request(const std::string& spec);

struct PolicyEvalReport {
  nlohmann::ordered_json json;
  std::string text;
};
PolicyEvalReport policy_eval_report(const std::string& db, const SweepReportInput& input,
                                    const std::vector<PolicyRequest>& requests);

}  // namespace palladium
