#include "analysis/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace palladium {
namespace {

CandidateResult ok(const std::string& w, double speedup) {
  return {w, Verdict::correct, speedup};
}
CandidateResult bad(const std::string& w, Verdict v) {
  return {w, v, std::nullopt};
}

TEST(MetricsTest, HandComputedSuite) {
  // a: best of 2.0 and 4.0 -> 4.0; b: 0.5 (slower than XLA) -> clipped to 1.0
  // in the suite; c: only failures -> 1.0; d: no candidates at all -> 1.0.
  const std::vector<CandidateResult> rows = {
      ok("a", 2.0),
      bad("a", Verdict::numerics_mismatch),
      ok("a", 4.0),
      ok("b", 0.5),
      bad("c", Verdict::no_code),
      bad("c", Verdict::compile_error),
      bad("c", Verdict::compile_error),
      // A failed candidate that somehow carries a speedup must not count.
      {"c", Verdict::numerics_mismatch, 9.0},
  };
  const auto ws = summarize_workloads({"a", "b", "c", "d"}, rows);
  ASSERT_EQ(ws.size(), 4u);

  EXPECT_EQ(ws[0].id, "a");
  EXPECT_EQ(ws[0].candidates, 3);
  EXPECT_EQ(ws[0].correct, 2);
  EXPECT_DOUBLE_EQ(ws[0].best_speedup, 4.0);
  EXPECT_EQ(ws[0].verdicts.at("correct"), 2);
  EXPECT_EQ(ws[0].verdicts.at("numerics_mismatch"), 1);
  EXPECT_EQ(ws[0].verdicts.size(), 2u);

  EXPECT_DOUBLE_EQ(ws[1].best_speedup, 0.5);  // real value, not clipped here
  EXPECT_EQ(ws[2].correct, 0);
  EXPECT_DOUBLE_EQ(ws[2].best_speedup, 1.0);
  EXPECT_EQ(ws[2].verdicts.at("compile_error"), 2);
  EXPECT_EQ(ws[3].candidates, 0);
  EXPECT_TRUE(ws[3].verdicts.empty());
  EXPECT_DOUBLE_EQ(ws[3].best_speedup, 1.0);

  const SuiteSummary s = summarize_suite(ws);
  EXPECT_EQ(s.workloads, 4);
  EXPECT_EQ(s.candidates, 8);
  EXPECT_EQ(s.correct, 3);
  EXPECT_DOUBLE_EQ(s.per_sample_correctness, 3.0 / 8.0);
  EXPECT_EQ(s.solved, 2);
  // geomean(4, 1, 1, 1) = 4^(1/4) = sqrt(2).
  EXPECT_NEAR(s.geomean_speedup, std::sqrt(2.0), 1e-12);
}

TEST(MetricsTest, FailedWorkloadsCountAsOne) {
  // Paper-style: 2 of 4 workloads at 1.21x each, 2 failed.
  const auto ws = summarize_workloads(
      {"w1", "w2", "w3", "w4"},
      {ok("w1", 1.21), ok("w2", 1.21), bad("w3", Verdict::timeout)});
  const SuiteSummary s = summarize_suite(ws);
  EXPECT_NEAR(s.geomean_speedup, std::sqrt(1.21), 1e-12);  // 1.1
  EXPECT_EQ(s.solved, 2);
}

TEST(MetricsTest, SpeedupBelowOneIsClippedInTheSuite) {
  const auto ws = summarize_workloads({"x", "y"}, {ok("x", 0.25), ok("y", 9.0)});
  EXPECT_DOUBLE_EQ(ws[0].best_speedup, 0.25);
  EXPECT_NEAR(summarize_suite(ws).geomean_speedup, 3.0, 1e-12);
}

TEST(MetricsTest, CorrectWithoutTimingCountsAsSolvedAtOne) {
  const auto ws = summarize_workloads(
      {"x"}, {{"x", Verdict::correct, std::nullopt}});
  EXPECT_EQ(ws[0].correct, 1);
  EXPECT_DOUBLE_EQ(ws[0].best_speedup, 1.0);
  EXPECT_EQ(summarize_suite(ws).solved, 1);
}

TEST(MetricsTest, EmptySuiteAndUnknownWorkloads) {
  const SuiteSummary empty = summarize_suite({});
  EXPECT_EQ(empty.workloads, 0);
  EXPECT_DOUBLE_EQ(empty.per_sample_correctness, 0.0);
  EXPECT_DOUBLE_EQ(empty.geomean_speedup, 1.0);

  // Rows of workloads outside the list (a subset report) are ignored.
  const auto ws = summarize_workloads({"a"}, {ok("a", 2.0), ok("zzz", 100.0)});
  const SuiteSummary s = summarize_suite(ws);
  EXPECT_EQ(s.candidates, 1);
  EXPECT_DOUBLE_EQ(s.geomean_speedup, 2.0);
}

TEST(MetricsTest, DuplicateWorkloadIdThrows) {
  EXPECT_THROW(summarize_workloads({"a", "a"}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
