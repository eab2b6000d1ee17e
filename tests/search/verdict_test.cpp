#include "search/verdict.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "search/eval_outcome.hpp"

namespace palladium {
namespace {

TEST(VerdictTest, TaxonomyMatchesArchitectureDoc) {
  // The order and spelling of docs/architecture.md, "Verdict taxonomy".
  const std::vector<std::string> expected = {
      "no_code",        "syntax_error",      "lint_rejected",
      "import_error",   "api_misuse",        "lowering_error",
      "compile_error",  "runtime_error",     "timeout",
      "crash",          "resource_exhausted", "shape_mismatch",
      "numerics_mismatch", "no_pallas",      "correct"};
  ASSERT_EQ(all_verdicts().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(to_string(all_verdicts()[i]), expected[i]);
    EXPECT_EQ(static_cast<size_t>(all_verdicts()[i]), i);
  }
}

TEST(VerdictTest, RoundTripsEveryVerdict) {
  for (Verdict v : all_verdicts()) {
    auto back = verdict_from_string(to_string(v));
    ASSERT_TRUE(back.has_value()) << to_string(v);
    EXPECT_EQ(*back, v);
  }
}

TEST(VerdictTest, RejectsUnknownText) {
  EXPECT_FALSE(verdict_from_string("").has_value());
  EXPECT_FALSE(verdict_from_string("Correct").has_value());
  EXPECT_FALSE(verdict_from_string("correct ").has_value());
  EXPECT_FALSE(verdict_from_string("numerics").has_value());
}

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
