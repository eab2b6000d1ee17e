#include "protocol/taxonomy.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>


namespace palladium {
namespace {

TEST(TaxonomyTest, VerdictsMatchArchitectureDoc) {
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

TEST(TaxonomyTest, RoundTripsEveryVerdict) {
  for (Verdict v : all_verdicts()) {
    auto back = verdict_from_string(to_string(v));
    ASSERT_TRUE(back.has_value()) << to_string(v);
    EXPECT_EQ(*back, v);
  }
}

TEST(TaxonomyTest, RejectsUnknownText) {
  EXPECT_FALSE(verdict_from_string("").has_value());
  EXPECT_FALSE(verdict_from_string("Correct").has_value());
  EXPECT_FALSE(verdict_from_string("correct ").has_value());
  EXPECT_FALSE(verdict_from_string("numerics").has_value());
}

TEST(TaxonomyTest, StagesAndTimingKindsRoundTrip) {
  ASSERT_FALSE(all_stages().empty());
  EXPECT_EQ(to_string(all_stages().front()), "extract");
  EXPECT_EQ(to_string(all_stages().back()), "done");
  for (Stage s : all_stages()) EXPECT_EQ(stage_from_string(to_string(s)), s);
  EXPECT_EQ(to_string(TimingKind::cpu_wall), "cpu-wall");
  EXPECT_EQ(to_string(TimingKind::tpu_wall_fallback), "tpu-wall-fallback");
  for (TimingKind k : all_timing_kinds()) EXPECT_EQ(timing_kind_from_string(to_string(k)), k);
  EXPECT_FALSE(timing_kind_from_string("cpu_wall").has_value());  // the spelling, not the C++ name
  EXPECT_EQ(sample_role_from_string("repair"), SampleRole::repair);
  EXPECT_EQ(to_string(Phase::optimise), "optimise");
}

}  // namespace
}  // namespace palladium
