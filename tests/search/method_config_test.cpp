#include "search/method_config.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

WorkloadBrief brief(std::string context = "") {
  return {"8p", "GEMM", "def workload(a, b): ...\n", std::move(context)};
}

StrategyMenus menus() { return {{"T"}, {"O"}}; }

TEST(MethodConfigTest, BuildsEachMethodWithItsName) {
  for (const auto& name : method_names()) {
    MethodConfig c;
    c.method = name;
    auto s = make_strategy(c, brief("## Context (hardware): x\n"), Budget(3), menus(), 1);
    EXPECT_EQ(s->method(), name);
    EXPECT_EQ(method_uses_context(c), name == "iterative_context");
  }
}

TEST(MethodConfigTest, CountsAndEarlyStopReachTheStrategy) {
  MethodConfig c;
  c.method = "autocomp";
  c.early_stop = {1, 1.0};
  auto s = make_strategy(c, brief(), Budget(50, BudgetCounts::calls), menus(), 1);
  EXPECT_EQ(s->budget().counts(), BudgetCounts::calls);
  auto reqs = s->propose(100);
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(s->budget().spent(), static_cast<int>(reqs.size()));  // plans are charged
}

TEST(MethodConfigTest, UnknownMethodAndMissingContextAreErrors) {
  MethodConfig c;
  c.method = "beam";
  EXPECT_THROW(make_strategy(c, brief(), Budget(1), menus(), 1), std::invalid_argument);
  c.method = "iterative_context";
  EXPECT_THROW(make_strategy(c, brief(), Budget(1), menus(), 1), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
