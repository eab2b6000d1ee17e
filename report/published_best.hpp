// The rule both reports (report/run_report.hpp, report/sweep_report.hpp) publish a re-timed
// workload's best by: a search's side-by-side re-timing (store table sittings) of its best
// kernel by the evaluations and the runner-up decides the published best, which is the faster
// by the sitting's medians, at its speedup against the baseline timed in the same sitting. The
// two kernels' bands overlapping means the ranking between them is not settled.
//
// A sitting counts only when it was held (no error, both kernels and the baseline timed) and
// re-timed the search's best kernel by the evaluations; otherwise it says nothing about the
// published best and the evaluations' best stands.
//
// Errors: none (a sitting that does not count gives nullopt).

#ifndef PALLADIUM_STORE_PUBLISHED_BEST_HPP_
#define PALLADIUM_STORE_PUBLISHED_BEST_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/run_store.hpp"

namespace palladium {

struct SittingView {
  std::vector<int64_t> candidates;  // best by the evaluations first
  std::vector<double> kernel_ms, kernel_low, kernel_high;
  double baseline_ms = 0;
  int timing_runs = 0;
  std::string timing_kind;
  size_t faster = 0;      // index of the faster by the sitting's medians (the published one)
  bool switched = false;  // the sitting reversed the evaluations' order
  bool overlap = false;   // the two kernels' bands overlap: the ranking is not settled
  double speedup(size_t i) const { return baseline_ms / kernel_ms[i]; }
  double published_speedup() const { return speedup(faster); }
};

// `sitting` as the published best of its search, whose best correct kernel by the evaluations
// is `best_candidate`; nullopt when the sitting does not count (see above).
std::optional<SittingView> published_by_sitting(const SittingRecord& sitting,
                                                int64_t best_candidate);

}  // namespace palladium

#endif  // PALLADIUM_STORE_PUBLISHED_BEST_HPP_
