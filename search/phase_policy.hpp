// Per-workload budget policies of the two-phase beam search: when to
// translate and when to optimise, expressed in the sample budget.
//
// The beam search asks its policy once before the first generation and once
// after each generation's selection (search/autocomp_search.hpp): "which phase
// does the next generation run in, or does the search end?", and before
// laying out a generation "how many units may this phase still spend?".
// Policies are pure functions of the PhaseView, so a resumed or reordered run
// makes the same decisions.
//
//   fixed_fraction(f): translation may spend at most floor(f * limit) units;
//     it ends when that is spent (or too little is left for one more plan and
//     code), or early when Autocomp's score exit fires (every scored beam
//     member >= 9.0). Optimisation then spends the rest of the budget. f = 0
//     optimises from the root at once (Autocomp's translate_iters = 0); f = 1
//     gives optimisation nothing, so the search ends with translation: the
//     translation search on its own.
//   adaptive(k, max_translate_fraction m): translate until the beam holds k
//     correct translated kernels (seeds), then optimise; go back to
//     translating whenever the beam holds no seed (it optimises the root
//     alone). Translation may spend at most floor(m * limit) units (m = 1:
//     no cap); when the cap is reached without k seeds the search optimises
//     what it has, and goes back to translating if the limit later grows
//     (global reallocation). The score exit is not used: seeds decide.
//
// Early stop (search/early_stop.hpp) composes with either policy and ends the
// search; global reallocation across workloads is a run-level object
// (search/global_allocator.hpp) that moves budget limits between searches.

#ifndef PALLADIUM_SEARCH_PHASE_POLICY_HPP_
#define PALLADIUM_SEARCH_PHASE_POLICY_HPP_

#include <climits>
#include <memory>
#include <optional>
#include <string>

#include "protocol/taxonomy.hpp"

namespace palladium {

struct PhaseView {
  int generation = 0;           // generations finished so far
  Phase phase = Phase::translate;  // the phase of the last one (translate before any)
  int limit = 0;                // the budget's limit
  int spent = 0;                // units spent in total
  int translate_spent = 0;      // units spent in translation generations
  bool translation_complete = false;  // the score exit fired in the last one
  int correct_seeds = 0;        // correct (non-root) kernels in the beam
  int min_step_cost = 1;        // units the smallest translation generation needs
};

struct PhasePolicyConfig {
  enum Kind { fixed_fraction, adaptive } kind = fixed_fraction;
  double translate_fraction = 0.5;  // fixed_fraction: in [0, 1]
  int seeds = 1;                    // adaptive: k >= 1
  double max_translate_fraction = 1.0;  // adaptive: in [0, 1]
};

class PhasePolicy {
 public:
  // Throws std::invalid_argument naming the bad field.
  explicit PhasePolicy(PhasePolicyConfig config);

  // The phase of the next generation, or nullopt when the search ends.
  std::optional<Phase> next_phase(const PhaseView& view) const;

  // Units `phase` may still spend (INT_MAX when only the budget limits it).
  int allowance(Phase phase, const PhaseView& view) const;

  const PhasePolicyConfig& config() const { return config_; }
  std::string name() const;  // "fixed_fraction" or "adaptive"

 private:
  int translate_cap(int limit) const;

  PhasePolicyConfig config_;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_PHASE_POLICY_HPP_
