#include "search/eval_outcome.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(EvalOutcomeTest, SpeedupOnlyWhenCorrectAndTimed) {
  EvalOutcome o;
  o.verdict = Verdict::correct;
  o.kernel_ms = 2.0;
  o.baseline_ms = 3.0;
  ASSERT_TRUE(o.speedup().has_value());
  EXPECT_DOUBLE_EQ(*o.speedup(), 1.5);

  EvalOutcome wrong = o;
  wrong.verdict = Verdict::numerics_mismatch;
  EXPECT_FALSE(wrong.speedup().has_value());

  EvalOutcome untimed = o;
  untimed.kernel_ms.reset();
  EXPECT_FALSE(untimed.speedup().has_value());

  EvalOutcome zero = o;
  zero.kernel_ms = 0.0;
  EXPECT_FALSE(zero.speedup().has_value());
}

}  // namespace
}  // namespace palladium
