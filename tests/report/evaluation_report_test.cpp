#include "report/evaluation_report.hpp"

#include <sstream>

#include <gtest/gtest.h>

namespace palladium {
namespace {

Evaluated timed(int runs) {
  Evaluated r;
  r.agent.agent_id = "a1";
  r.agent.backend = "interpret";
  r.evaluation.verdict = Verdict::correct;
  r.evaluation.stage = Stage::done;
  r.evaluation.kernel_ms = 2.0;
  r.evaluation.baseline_ms = 4.0;
  r.evaluation.kernel_ms_low = 1.6;
  r.evaluation.kernel_ms_high = 2.5;
  r.evaluation.timing_runs = runs;
  r.evaluation.timing_kind = TimingKind::cpu_wall;
  return r;
}

TEST(EvaluationReport, JsonHasEveryFieldEnumsSpelledAndTheStoredSpeedup) {
  auto j = evaluation_json(timed(3), "8p");
  EXPECT_EQ(j["workload"], "8p");
  EXPECT_EQ(j["agent_id"], "a1");
  EXPECT_EQ(j["verdict"], "correct");
  EXPECT_EQ(j["timing_kind"], "cpu-wall");
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  Evaluated wrong = timed(3);
  wrong.evaluation.verdict = Verdict::numerics_mismatch;
  EXPECT_TRUE(evaluation_json(wrong, "8p")["speedup"].is_null()) << "only a correct kernel has one";
}

TEST(EvaluationReport, TextGivesTheBandAndSaysCpuTimeIsNotTpuTime) {
  std::ostringstream out;
  print_evaluation(out, timed(3), "8p");
  EXPECT_NE(out.str().find("speedup    2x [1.6, 2.5] over 3 timed runs"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("NOT a TPU time"), std::string::npos);
  std::ostringstream one;
  print_evaluation(one, timed(1), "8p");
  EXPECT_NE(one.str().find("(one timed run: no band)"), std::string::npos) << one.str();
}

}  // namespace
}  // namespace palladium
