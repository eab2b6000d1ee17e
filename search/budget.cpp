#include "search/budget.hpp"

#include <stdexcept>
#include <string>

namespace palladium {

std::string_view to_string(BudgetCounts counts) {
  return counts == BudgetCounts::calls ? "calls" : "candidates";
}

std::optional<BudgetCounts> budget_counts_from_string(std::string_view text) {
  if (text == "candidates") return BudgetCounts::candidates;
  if (text == "calls") return BudgetCounts::calls;
  return std::nullopt;
}

bool is_candidate_role(SampleRole role) {
  return role == SampleRole::code || role == SampleRole::repair;
}

Budget::Budget(int limit, BudgetCounts counts) : limit_(limit), counts_(counts) {
  if (limit < 0) {
    throw std::invalid_argument("budget: negative limit " + std::to_string(limit));
  }
}

int Budget::cost(SampleRole role) const {
  return counts_ == BudgetCounts::calls || is_candidate_role(role) ? 1 : 0;
}

bool Budget::try_charge(SampleRole role) {
  if (!can_afford(role)) return false;
  spent_ += cost(role);
  issued_[static_cast<size_t>(role)]++;
  return true;
}

int Budget::issued(SampleRole role) const { return issued_[static_cast<size_t>(role)]; }

int Budget::issued_total() const {
  int n = 0;
  for (int k : issued_) n += k;
  return n;
}

void Budget::set_limit(int limit) {
  if (limit < spent_) {
    throw std::invalid_argument("budget: limit " + std::to_string(limit) +
                                " is below the " + std::to_string(spent_) +
                                " units already spent");
  }
  limit_ = limit;
}

}  // namespace palladium
