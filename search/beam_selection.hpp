// Autocomp's beam selection rules (autocomp.md §1.4-1.6), as pure functions
// over plain candidate records, exactly:
//
//   select_beam (filter_code_candidates, search.py L617-728):
//     1. incorrect candidates (infinite loss) are dropped first;
//     2. a stable sort: by (translation score desc, loss asc) when
//        rule.translation_sort, else by loss asc. Incumbents come first in
//        the input, so they win ties; a missing translation score sorts as 0;
//     3. walk the sorted list until rule.keep are kept:
//        - the root (no parent) is kept without checks;
//        - unless translation_sort, a candidate that is not exempt (not a
//          beam incumbent) is skipped when loss >= parent_loss * keep_factor;
//        - a candidate that conflicts with an already kept one under the
//          dedup level is skipped (dedup_conflicts).
//   keep_factor: Autocomp's rule, on the *absolute* generation number
//     (translate_perf_threshold in translation, else 1.1 up to generation 2,
//     then 1.0): see keep_factor_for().
//   translation_complete (_check_translation_complete, L585-599): true when
//     at least one kept member has a translation score and every member
//     that has one scores >= the exit score (9.0). The root never has one.
//
// No state, no I/O; deterministic.

#ifndef PALLADIUM_SEARCH_BEAM_SELECTION_HPP_
#define PALLADIUM_SEARCH_BEAM_SELECTION_HPP_

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace palladium {

// One candidate as selection sees it. Ids are sample indices; the root (the
// baseline module) has id kRootId and no parent.
struct BeamCandidate {
  int id = 0;
  std::optional<int> parent;  // nullopt: this is the root
  double parent_loss = 1.0;   // the parent's loss (search/candidate_loss.hpp)
  std::string plan;           // the plan text it implements ("" for the root)
  double loss = 0.0;
  std::optional<double> translation_score;
  // Non-root ancestors, nearest first (parent, grandparent, ...); dedup level 2.
  std::vector<int> ancestors;
};

inline constexpr int kRootId = -1;

struct SelectionRule {
  int keep = 4;                 // B
  bool translation_sort = false;
  double keep_factor = 1.0;
  // Autocomp's prevent_duplicate_level: < 0 none; 0 same (parent, plan);
  // 1 same parent unless it is the root; 2 same (parent, plan) or any shared
  // non-root ancestor.
  int dedup_level = 0;
};

// Autocomp's keep factor for absolute generation `generation`.
double keep_factor_for(int generation, bool translating, double translate_perf_threshold,
                       double early_keep_factor = 1.1, int early_generations = 2,
                       double keep_factor = 1.0);

// True if `c` may not join `kept` under `dedup_level`.
bool dedup_conflicts(const BeamCandidate& c, const std::vector<BeamCandidate>& kept,
                     int dedup_level);

// The next beam from `candidates` (incumbents first, then new candidates in
// sample-index order); `exempt` holds the incumbents' ids.
std::vector<BeamCandidate> select_beam(const std::vector<BeamCandidate>& candidates,
                                       const std::set<int>& exempt, const SelectionRule& rule);

bool translation_complete(const std::vector<BeamCandidate>& beam, double exit_score);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_BEAM_SELECTION_HPP_
