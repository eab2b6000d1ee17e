#include "search/phase_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace palladium {

PhasePolicy::PhasePolicy(PhasePolicyConfig config) : config_(config) {
  if (!(config_.translate_fraction >= 0.0 && config_.translate_fraction <= 1.0)) {
    throw std::invalid_argument("phase policy: translate_fraction must be in [0, 1], not " +
                                std::to_string(config_.translate_fraction));
  }
  if (!(config_.max_translate_fraction >= 0.0 && config_.max_translate_fraction <= 1.0)) {
    throw std::invalid_argument("phase policy: max_translate_fraction must be in [0, 1], not " +
                                std::to_string(config_.max_translate_fraction));
  }
  if (config_.seeds < 1) {
    throw std::invalid_argument("phase policy: seeds must be >= 1, not " +
                                std::to_string(config_.seeds));
  }
}

std::string PhasePolicy::name() const {
  return config_.kind == PhasePolicyConfig::adaptive ? "adaptive" : "fixed_fraction";
}

int PhasePolicy::translate_cap(int limit) const {
  const double f = config_.kind == PhasePolicyConfig::adaptive ? config_.max_translate_fraction
                                                               : config_.translate_fraction;
  // The small epsilon keeps 0.3 * 10 at 3 despite binary rounding.
  return static_cast<int>(std::floor(f * limit + 1e-9));
}

std::optional<Phase> PhasePolicy::next_phase(const PhaseView& v) const {
  const bool translate_room = translate_cap(v.limit) - v.translate_spent >= v.min_step_cost;
  if (config_.kind == PhasePolicyConfig::adaptive) {
    if (!translate_room) return Phase::optimise;
    if (v.generation == 0) return Phase::translate;
    if (v.phase == Phase::translate) {
      return v.correct_seeds >= config_.seeds ? Phase::optimise : Phase::translate;
    }
    return v.correct_seeds == 0 ? Phase::translate : Phase::optimise;
  }
  // fixed_fraction
  const bool translation_search = config_.translate_fraction >= 1.0;
  if (v.generation > 0 && v.phase == Phase::optimise) return Phase::optimise;
  const bool translating_done = (v.generation > 0 && v.translation_complete) || !translate_room;
  if (!translating_done) return Phase::translate;
  if (translation_search) return std::nullopt;
  return Phase::optimise;
}

int PhasePolicy::allowance(Phase phase, const PhaseView& v) const {
  if (phase != Phase::translate) return INT_MAX;
  return std::max(0, translate_cap(v.limit) - v.translate_spent);
}

}  // namespace palladium
