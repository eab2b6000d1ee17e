// Result checks: which agent results the dispatcher re-dispatches before answering, and what a
// second (or third) opinion decides (issue 21 item 6, issue 23 item 3).
//
// Why. An agent's key can be stolen, and a stolen allowlisted key can answer `correct` for
// every lease it gets; nothing on the wire can tell such a result from an honest one. Only
// another agent evaluating the same job can. And a speed that is hard to believe may be a
// timing glitch rather than a forgery: it is timed again on another slot before it is
// published.
//
// What is re-dispatched (`first_look`):
//   - a random share of all results (Options::share): to a different agent;
//   - every `correct` whose timing is suspect (search/plausibility.hpp: a speedup above the
//     ceiling, or on a TPU a time below the v6e roofline): to a different agent when there is
//     one, else to another slot of the same agent (a re-timing, not a check).
// The second agent gets the job as an ordinary job: the same job id, a fresh lease, nothing
// that tells it that it is a check.
//
// What a second opinion decides (`decide`), between two results of the same job from
// different agents:
//   - they agree when both are `correct` or both are definite failures; a verdict that
//     depends on the host rather than on the candidate (timeout, crash, resource_exhausted)
//     proves nothing either way, so such a pair is inconclusive and the first result stands;
//   - a disagreement (one `correct`, one definite failure) needs a third agent to break the
//     tie when there is one: the key outvoted two to one is quarantined. Without a third agent
//     the key that claimed `correct` is quarantined and the failure is the answer, since a
//     forged `correct` is the lie that pays (it can put a wrong kernel in the results), while
//     a false failure only costs its search a candidate.
//   - when both are `correct` and the first timing was suspect, the gate resolves it: if the
//     second timing is suspect too the speed holds (kept, flagged implausible_speed), else
//     the second timing replaces the first. Both timings are kept (retiming_json).
//
// Pure: the dispatcher feeds it results and asks; the random share comes from a seeded
// generator, so a test can fix it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "protocol/evaluation.hpp"
#include "search/plausibility.hpp"
#include "search/roofline.hpp"

namespace palladium {

struct ResultCheckOptions {
  // Share of results re-dispatched to a different agent at random (run config
  // evaluation.recheck_share, whose default is 0.05). 0, the default here, turns random checks
  // off; suspect timings are still re-timed.
  double share = 0.0;
  // The plausibility gate's speedup ceiling (run config evaluation.speedup_ceiling).
  double speedup_ceiling = kDefaultSpeedupCeiling;
  // Workloads' FLOPs and bytes, for the roofline of TPU timings (none: ceiling only).
  std::map<std::string, WorkloadCost> costs;
  // The random share's generator seed; 0 draws one from std::random_device.
  uint64_t seed = 0;
};

// Why a result is looked at again.
struct FirstLook {
  std::string workload;  // the job's
  int64_t job_id = 0;
  bool sampled = false;  // drawn for a random check
  TimingCheck timing;    // suspect: a correct result's timing the gate doubts
  bool again() const { return sampled || timing.suspect; }
};

enum class Agreement { agree, disagree, inconclusive };

// One agent's answer to a job, with the identity that sent it (the CURVE key, or the routing
// id on a plaintext link).
struct Opinion {
  std::string peer;
  Evaluated result;
};

struct CheckDecision {
  bool need_tiebreak = false;  // disagreement, and a third agent exists: ask it first
  Evaluated answer;            // else: the result to deliver
  // Peers to quarantine (at most one), with the reason.
  std::vector<std::pair<std::string, std::string>> quarantine;
};

// Whether two results of one job agree (see above).
Agreement compare_results(const Evaluated& a, const Evaluated& b);

class ResultChecks {
 public:
  explicit ResultChecks(ResultCheckOptions options);

  // Whether `first` (a final-tier result of job `job_id` for `workload`) is looked at again,
  // and why.
  FirstLook first_look(const Evaluated& first, const std::string& workload, int64_t job_id);

  // The decision once `opinions` (the first, then the second, then a tie-breaker's) are in.
  // `look` is the first result's; `third_available` says whether an agent other than the
  // opinions' peers could break a tie. The answer carries plausibility, retiming_json and
  // cross_check_json (its CheckFindings).
  CheckDecision decide(const FirstLook& look, const std::vector<Opinion>& opinions,
                       bool third_available) const;

  // The gate's verdict on a timing alone (a correct result that was not re-timed).
  // "" for a result that is not correct and timed.
  std::string plausibility_of(const Evaluated& r, const std::string& workload) const;

  const ResultCheckOptions& options() const { return options_; }

 private:
  TimingCheck timing_check(const Evaluated& r, const std::string& workload) const;

  ResultCheckOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace palladium
