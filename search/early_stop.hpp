// Autocomp's early stop (autocomp.md §1.7, search.py should_early_stop),
// as a pure function so every strategy applies the same rule.
//
// `losses[g - 1]` is the best loss (lower is better) the search held at the
// start of generation g (1-based); `generation` is the generation about to
// start. With window E > 0 the search stops before generation g when
//   g >= E + 1, g > last_translate_generation + E, losses[g-1-E] != 0 and
//   losses[g-1] / losses[g-1-E] >= threshold,
// i.e. the best has not improved by the factor `threshold` over the last E
// generations, counted only once E generations have passed since
// translation ended (last_translate_generation is 0 when nothing was
// translated). Infinite losses (nothing correct yet) never stop a search:
// inf / inf is NaN and compares false, as in Python.
//
// Requires losses.size() >= generation when the window can apply; throws
// std::invalid_argument otherwise.

#ifndef PALLADIUM_SEARCH_EARLY_STOP_HPP_
#define PALLADIUM_SEARCH_EARLY_STOP_HPP_

#include <vector>

namespace palladium {

struct EarlyStopRule {
  int window = 0;          // E; 0 turns early stop off (Autocomp's default)
  double threshold = 1.0;  // Autocomp's default: stop when not improved at all
};

bool should_early_stop(const std::vector<double>& losses, int generation,
                       const EarlyStopRule& rule, int last_translate_generation);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_EARLY_STOP_HPP_
