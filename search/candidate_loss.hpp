// The loss the search methods rank candidates by (lower is better).
//
// Autocomp ranks by raw latency. We rank by relative time, kernel_ms /
// baseline_ms from the same evaluation, i.e. 1 / speedup: on a loaded or
// shared host the baseline timed beside the kernel cancels most of the noise,
// and the root (the baseline module itself) has loss exactly 1.0 without an
// evaluation of its own. With a constant baseline the order is the same as
// Autocomp's.
//
//   correct with both times        -> kernel_ms / baseline_ms
//   correct but untimed            -> kUntimedLoss: kept, ranked after every
//                                     timed correct candidate
//   anything else                  -> +infinity (never enters a beam)

#ifndef PALLADIUM_SEARCH_CANDIDATE_LOSS_HPP_
#define PALLADIUM_SEARCH_CANDIDATE_LOSS_HPP_

#include <limits>

#include "search/eval_outcome.hpp"

namespace palladium {

inline constexpr double kRootLoss = 1.0;
inline constexpr double kUntimedLoss = 1e12;

inline double candidate_loss(const EvalOutcome& outcome) {
  if (outcome.verdict != Verdict::correct) return std::numeric_limits<double>::infinity();
  if (auto s = outcome.speedup()) return 1.0 / *s;
  return kUntimedLoss;
}

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_CANDIDATE_LOSS_HPP_
