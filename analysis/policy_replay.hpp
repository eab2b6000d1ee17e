// Offline policy evaluation: what another budget policy would have achieved,
// estimated from recorded trajectories (analysis/trajectory.hpp) with no new
// LLM call or evaluation.
//
// Every policy here decides, sample by sample, which workload's NEXT
// RECORDED candidate to buy, so what it gets per workload is always a prefix
// of that workload's recording. That is why replay can be exact:
//
//   prefix:K        every workload gets its first K candidates (the budget
//                   curve at K).
//   early-stop:P    every workload takes its candidates in order and stops
//                   once it is solved and P candidates in a row brought no
//                   better speedup.
//   realloc:K[,patience=P][,give_up=G]
//                   a global reallocation of K x |suite| candidates: buy for
//                   the unsolved workload with the fewest candidates so far,
//                   else for the solved one still improving (fewer than P
//                   candidates since its last gain) with the fewest; retire a
//                   solved workload after P candidates without a gain and an
//                   unsolved one after G candidates (default 2K). Stops when
//                   the total is spent or every workload is retired.
//
// Exactness. A replayed estimate equals what a real run under the policy
// would have produced when (a) the method's k-th candidate does not depend on
// its budget or on other workloads (true of iterative and iterative+context;
// NOT of Autocomp, whose translate/optimise split is a fraction of the
// budget, nor of any policy that changes prompts, beams or feedback), and
// (b) no workload is asked for more candidates than were recorded. (b) is
// checked: a workload that runs out is "censored", the outcome is marked
// inexact, and its numbers are a lower bound on that workload. (a) is the
// caller's to state, since it depends on the method (see
// replay_is_exact_for_method()).
//
// Metrics are analysis/metrics.hpp's, over the whole suite, so prefix:K with K
// at least every recording's length reproduces the recorded run's numbers
// exactly (tested).
//
// Pure and deterministic; no I/O.

#ifndef PALLADIUM_SEARCH_POLICY_REPLAY_HPP_
#define PALLADIUM_SEARCH_POLICY_REPLAY_HPP_

#include <map>
#include <string>
#include <vector>

#include "analysis/bootstrap.hpp"
#include "analysis/trajectory.hpp"

namespace palladium {

struct ReplayPolicy {
  enum Kind { prefix, early_stop, realloc } kind = prefix;
  int per_workload = 1;  // prefix: K; realloc: K (the total is K x suite size)
  int patience = 2;      // early-stop: P; realloc: P
  int give_up = 0;       // realloc: G; 0 means 2K

  // The canonical spelling, e.g. "realloc:4,patience=2,give_up=8".
  std::string text() const;
};

// Parses "prefix:4", "early-stop:3", "realloc:4", "realloc:4,patience=3,give_up=6".
// Throws std::invalid_argument naming the spec and what is wrong.
ReplayPolicy parse_replay_policy(const std::string& spec);

// The policy with its budget K replaced (for curves over K); early-stop
// has no K and is returned unchanged.
ReplayPolicy with_budget(ReplayPolicy policy, int per_workload);

// False for methods whose k-th candidate depends on the budget (autocomp).
bool replay_is_exact_for_method(const std::string& method);

struct ReplayOutcome {
  int64_t seed = 0;
  int samples = 0;  // candidates bought across the suite
  int correct = 0;
  int solved = 0;
  double per_sample_correctness = 0.0;
  double geomean_speedup = 1.0;
  std::map<std::string, int> taken;    // workload -> candidates bought
  std::vector<std::string> censored;   // workloads that ran out of recording
  bool exact() const { return censored.empty(); }
};

ReplayOutcome replay(const ReplayPolicy& policy, const SeedTrajectories& recorded);

struct PolicyEstimate {
  ReplayPolicy policy;
  std::vector<ReplayOutcome> per_seed;
  // Means over seeds with percentile-bootstrap 95% intervals (analysis/bootstrap.hpp).
  MeanInterval solved, geomean_speedup, per_sample_correctness, samples;
  bool exact = true;  // every seed's outcome is
};

// Replays `policy` on every seed and summarises. Throws std::invalid_argument
// if `seeds` is empty.
PolicyEstimate estimate_policy(const ReplayPolicy& policy,
                               const std::vector<SeedTrajectories>& seeds);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_POLICY_REPLAY_HPP_
