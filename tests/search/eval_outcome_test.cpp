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

TEST(EvalOutcomeTest, SearchObservesTheEvaluationsVerdictStageErrorAndTimes) {
  Evaluation e;
  e.verdict = Verdict::numerics_mismatch;
  e.stage = Stage::numerics;
  e.error = "max_abs_err 0.5 > atol";
  e.error_signature = "numerics:allclose";
  e.kernel_ms = 2.0;
  e.baseline_ms = 3.0;
  e.timing_kind = TimingKind::tpu_profiler;
  e.stdout_text = "for the store only";
  EvalOutcome o = EvalOutcome::from(e);
  EXPECT_EQ(o.verdict, Verdict::numerics_mismatch);
  EXPECT_EQ(o.stage, "numerics");
  EXPECT_EQ(o.error, e.error);
  EXPECT_EQ(o.error_signature, e.error_signature);
  EXPECT_EQ(o.kernel_ms, 2.0);
  EXPECT_EQ(o.baseline_ms, 3.0);
  EXPECT_EQ(o.timing_kind, "tpu-profiler");
  EXPECT_FALSE(o.speedup().has_value());  // not correct

  e.verdict = Verdict::correct;
  EXPECT_EQ(EvalOutcome::from(e).speedup(), speedup(e));
  EXPECT_DOUBLE_EQ(*speedup(e), 1.5);

  Evaluation timeout;  // the agent's own answer: no stage, untimed
  timeout.verdict = Verdict::timeout;
  EXPECT_EQ(EvalOutcome::from(timeout).stage, "");
  EXPECT_EQ(EvalOutcome::from(timeout).timing_kind, "");
}

}  // namespace
}  // namespace palladium
