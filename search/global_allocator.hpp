// GlobalAllocator: the run-level budget policy "global reallocation across
// workloads". Plain search/ code: the run actor feeds it the searches'
// SearchStatus (search/strategy.hpp) and applies the limits it returns.
//
// The run's total budget is searches x per_search_budget. Every search
// starts with an open budget of floor(initial_fraction x per_search_budget);
// the rest is the pool. Decisions happen only at an *epoch*: a moment when
// every search is idle (waiting for budget) or done. At an epoch:
//   1. every search's unspent limit goes back to the pool;
//   2. searches that are done, hopeless (no correct candidate after
//      hopeless_after candidates) or saturated (correct, but the best
//      speedup has not improved over its last saturation_window candidates)
//      are closed at what they spent: the run stops spending on them;
//   3. the others, in order of expected gain per sample (highest first, ties
//      by search index), each get max(wanted, chunk) units (chunk keeps a
//      one-sample-at-a-time search from starving beside a beam that wants a
//      whole generation per epoch) while the pool can
//      pay their `wanted` step; when it cannot, a search gets what is left
//      and its budget is closed (it spends it, truncating its last step), and
//      the searches after it are closed.
// Expected gain per sample of a search with n candidates (see
// expected_gain()): the increase of log(best speedup, clipped at 1) over its
// last min(window, n) candidates divided by that count, plus an exploration
// prior of explore / (n + 1), so a search that has not yet run ranks first
// and the suite's geomean objective decides the rest.
//
// Determinism: a search's status at an idle point depends only on its
// observations and its grants, never on timing, and the allocator is a pure
// function of the statuses it is given at each epoch, so a resumed run
// (which replays stored samples to the same idle points) makes the same
// grants. The total granted never exceeds the run's total budget.
//
// Errors: std::invalid_argument for a bad config or a status count that does
// not match. Not thread-safe; one owner (the run actor).

#ifndef PALLADIUM_SEARCH_GLOBAL_ALLOCATOR_HPP_
#define PALLADIUM_SEARCH_GLOBAL_ALLOCATOR_HPP_

#include <string>
#include <vector>

#include "search/strategy.hpp"

namespace palladium {

struct GlobalAllocatorConfig {
  double initial_fraction = 0.5;  // of the per-search budget, in [0, 1]
  int hopeless_after = 0;         // candidates; 0: the per-search budget
  int saturation_window = 0;      // candidates; 0: half the per-search budget
  int chunk = 0;                  // smallest grant; 0: a quarter of the per-search budget
  int gain_window = 0;            // candidates; 0: the saturation window
  double explore = 0.1;           // exploration prior, >= 0
};

class GlobalAllocator {
 public:
  enum class Standing { active, done, hopeless, saturated };

  struct Grant {
    int search = 0;
    int limit = 0;      // the search's new limit (>= its spent)
    bool open = false;  // false: closed, no more budget will come
    Standing standing = Standing::active;
  };

  GlobalAllocator(int searches, int per_search_budget, GlobalAllocatorConfig config);

  int searches() const { return searches_; }
  int total() const { return total_; }
  int initial_limit() const { return initial_; }
  // Units neither spent nor held by any search's limit.
  int pool() const { return pool_; }
  int epochs() const { return epochs_; }

  // One epoch: `statuses[i]` is search i's status; each must be idle or
  // done. Returns one Grant per search. Throws std::invalid_argument when the
  // count is wrong, a search is neither idle nor done, or a status's limit is
  // not the one last granted.
  std::vector<Grant> at_epoch(const std::vector<SearchStatus>& statuses);

  Standing standing(const SearchStatus& s) const;
  double expected_gain(const SearchStatus& s) const;

  static std::string to_string(Standing s);

 private:
  int searches_;
  int per_search_;
  GlobalAllocatorConfig config_;
  int total_;
  int initial_;
  int pool_;
  int epochs_ = 0;
  std::vector<int> limits_;  // what each search holds
  std::vector<bool> closed_;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_GLOBAL_ALLOCATOR_HPP_
