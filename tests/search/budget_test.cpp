#include "search/budget.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace palladium {
namespace {

TEST(BudgetTest, CandidatesModeChargesOnlyCodeAndRepair) {
  Budget b(2);
  EXPECT_EQ(b.counts(), BudgetCounts::candidates);
  for (SampleRole free_role : {SampleRole::plan, SampleRole::score, SampleRole::menu}) {
    EXPECT_EQ(b.cost(free_role), 0);
    EXPECT_TRUE(b.try_charge(free_role));
  }
  EXPECT_EQ(b.spent(), 0);
  EXPECT_TRUE(b.try_charge(SampleRole::code));
  EXPECT_TRUE(b.try_charge(SampleRole::repair));
  EXPECT_EQ(b.remaining(), 0);
  EXPECT_FALSE(b.try_charge(SampleRole::code));
  EXPECT_FALSE(b.try_charge(SampleRole::repair));
  // Free roles are still recorded, with their role, after the budget is spent.
  EXPECT_TRUE(b.try_charge(SampleRole::plan));
  EXPECT_EQ(b.issued(SampleRole::plan), 2);
  EXPECT_EQ(b.issued(SampleRole::code), 1);
  EXPECT_EQ(b.issued(SampleRole::repair), 1);
  EXPECT_EQ(b.issued_total(), 6);
}

TEST(BudgetTest, CallsModeChargesEveryRole) {
  Budget b(3, BudgetCounts::calls);
  EXPECT_TRUE(b.try_charge(SampleRole::plan));
  EXPECT_TRUE(b.try_charge(SampleRole::score));
  EXPECT_TRUE(b.try_charge(SampleRole::code));
  EXPECT_FALSE(b.try_charge(SampleRole::menu));
  EXPECT_EQ(b.spent(), 3);
  EXPECT_EQ(b.issued(SampleRole::menu), 0);  // a refused charge records nothing
}

TEST(BudgetTest, LimitMovesButNeverBelowSpent) {
  Budget b(3);
  b.try_charge(SampleRole::code);
  b.try_charge(SampleRole::code);
  b.set_limit(2);
  EXPECT_EQ(b.remaining(), 0);
  EXPECT_THROW(b.set_limit(1), std::invalid_argument);
  EXPECT_EQ(b.limit(), 2);
  b.set_limit(10);
  EXPECT_TRUE(b.can_afford(SampleRole::code, 8));
  EXPECT_FALSE(b.can_afford(SampleRole::code, 9));
  EXPECT_TRUE(b.can_afford(SampleRole::plan, 1000));
}

TEST(BudgetTest, CountsSpellings) {
  EXPECT_EQ(budget_counts_from_string("calls"), BudgetCounts::calls);
  EXPECT_EQ(budget_counts_from_string("candidates"), BudgetCounts::candidates);
  EXPECT_FALSE(budget_counts_from_string("samples").has_value());
  EXPECT_EQ(to_string(BudgetCounts::calls), "calls");
  EXPECT_FALSE(Budget(1).is_open());
}

}  // namespace
}  // namespace palladium
