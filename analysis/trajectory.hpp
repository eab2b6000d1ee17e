// Trajectories: what a search recorded, in the order it spent its budget.
//
// A trajectory is one workload's candidates (code and repair samples, the
// unit of the sample budget and of per-sample correctness) of one search
// (method x seed), in issue order. A SeedTrajectories holds every
// workload's trajectory of one seed of one condition (a sweep cell without
// its seed axis), plus the suite they are measured over. Budget curves and
// offline policy evaluation (analysis/policy_replay.hpp) read only these.
//
// Plain data; no I/O.

#ifndef PALLADIUM_SEARCH_TRAJECTORY_HPP_
#define PALLADIUM_SEARCH_TRAJECTORY_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/verdict.hpp"

namespace palladium {

struct TrajectoryStep {
  Verdict verdict = Verdict::no_code;
  std::optional<double> speedup;  // only read when correct
};

struct SeedTrajectories {
  int64_t seed = 0;
  std::vector<std::string> suite;  // workload ids, in report order
  // Workload id -> its candidates in issue order. A suite workload without
  // an entry recorded nothing (it counts as unsolved, 1.0x).
  std::map<std::string, std::vector<TrajectoryStep>> by_workload;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_TRAJECTORY_HPP_
