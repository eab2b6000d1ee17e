// Budget: how many samples one workload search may still spend.
//
// The unit is a sample of a charged role. By default (counts = candidates)
// only candidates are charged: code and repair samples, the unit of
// per-sample correctness. Plan, score and menu samples are then free but
// still counted per role, so reports can show them. With counts = calls every
// LLM call is charged, whatever its role (the config key budget.counts).
//
// A strategy charges its budget for every request it proposes (see
// search/strategy.hpp, which enforces it), so a strategy can never spend more
// than limit(). The run may move the limit (global reallocation,
// search/global_allocator.hpp) but never below what is already spent.
//
// An *open* budget may still grow: a strategy that cannot afford its next
// step waits instead of starting a truncated one. A *closed* budget will not
// grow: the strategy spends what is left, truncating its last step, and is
// then done. Budgets start closed.
//
// Errors: std::invalid_argument for a negative limit, a limit below spent(),
// or an unknown counts spelling. Not thread-safe; one owner.

#ifndef PALLADIUM_SEARCH_BUDGET_HPP_
#define PALLADIUM_SEARCH_BUDGET_HPP_

#include <array>
#include <optional>
#include <string_view>

#include "protocol/taxonomy.hpp"

namespace palladium {

enum class BudgetCounts { candidates, calls };

std::string_view to_string(BudgetCounts counts);
// "candidates" or "calls"; nullopt for anything else.
std::optional<BudgetCounts> budget_counts_from_string(std::string_view text);

// True for the roles that produce a candidate kernel (code, repair).
bool is_candidate_role(SampleRole role);

class Budget {
 public:
  explicit Budget(int limit, BudgetCounts counts = BudgetCounts::candidates);

  BudgetCounts counts() const { return counts_; }

  // Units one sample of `role` costs: 1 if the role is charged, else 0.
  int cost(SampleRole role) const;

  int limit() const { return limit_; }
  int spent() const { return spent_; }
  int remaining() const { return limit_ - spent_; }

  // True if `n` more samples of `role` fit.
  bool can_afford(SampleRole role, int n = 1) const {
    return spent_ + cost(role) * n <= limit_;
  }

  // Records one sample of `role` and charges its cost. Returns false and
  // changes nothing if it does not fit.
  bool try_charge(SampleRole role);

  // Samples recorded with `role`, charged or not.
  int issued(SampleRole role) const;
  int issued_total() const;

  // Moves the limit. Throws std::invalid_argument if `limit` < spent().
  void set_limit(int limit);

  bool is_open() const { return open_; }
  void set_open(bool open) { open_ = open; }

 private:
  int limit_;
  BudgetCounts counts_;
  int spent_ = 0;
  bool open_ = false;
  std::array<int, kSampleRoleNames.size()> issued_{};
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_BUDGET_HPP_
