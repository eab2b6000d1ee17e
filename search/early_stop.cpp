#include "search/early_stop.hpp"

#include <stdexcept>
#include <string>

namespace palladium {

bool should_early_stop(const std::vector<double>& losses, int generation,
                       const EarlyStopRule& rule, int last_translate_generation) {
  const int e = rule.window;
  if (e <= 0 || generation < e + 1) return false;
  if (generation <= last_translate_generation + e) return false;
  if (static_cast<int>(losses.size()) < generation) {
    throw std::invalid_argument("should_early_stop: " + std::to_string(losses.size()) +
                                " losses for generation " + std::to_string(generation));
  }
  const double now = losses[static_cast<size_t>(generation - 1)];
  const double old = losses[static_cast<size_t>(generation - 1 - e)];
  if (old == 0.0) return false;
  return now / old >= rule.threshold;
}

}  // namespace palladium
