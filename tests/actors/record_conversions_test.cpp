#include "actors/record_conversions.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

wire::Result result(const std::string& verdict) {
  wire::Result r;
  r.job_id = 7;
  r.agent_id = "agent-1";
  r.backend = "interpret";
  r.verdict = verdict;
  r.stage = "numerics";
  r.error = "max_abs_err 0.5 > atol 0.01";
  r.stage_ms = {{"lint", 1.5}, {"numerics", 200.25}};
  r.max_abs_err = 0.5;
  r.timing_kind = "cpu-wall";
  return r;
}

// evaluations.attempts is what the dispatcher counted, not a constant.
TEST(RecordConversionsTest, AttemptsAreTheDispatchesTheJobTook) {
  wire::Result r = result("numerics_mismatch");
  r.dispatches = 3;
  EXPECT_EQ(record_from_result(42, r).attempts, 3);
  r.dispatches = 1;
  EXPECT_EQ(record_from_result(42, r).attempts, 1);
  // A result that never passed through the dispatcher (0) still took one.
  r.dispatches = 0;
  EXPECT_EQ(record_from_result(42, r).attempts, 1);
}

TEST(RecordConversionsTest, AResultKeepsItsFields) {
  wire::Result r = result("numerics_mismatch");
  r.device_kind = "cpu";
  r.jax_version = "0.10.2";
  r.libtpu_version = "0.0.42.1";
  r.seeds = {4242, 17};
  r.outside_pallas_fraction = 0.25;
  r.numerics_path = "cpu_branch_only";
  const EvaluationRecord e = record_from_result(42, r);
  // What the judge drew and how it checked are recorded, not dropped at the agent.
  EXPECT_EQ(e.input_seeds, (std::vector<int64_t>{4242, 17}));
  EXPECT_EQ(e.outside_pallas_flops_share, 0.25);
  EXPECT_EQ(e.numerics_path, "cpu_branch_only");
  EXPECT_EQ(e.candidate_id, 42);
  EXPECT_EQ(e.verdict, Verdict::numerics_mismatch);
  EXPECT_EQ(e.stage, "numerics");
  EXPECT_EQ(e.agent_id, "agent-1");
  EXPECT_EQ(e.backend, "interpret");
  EXPECT_EQ(e.device_kind, "cpu");
  EXPECT_EQ(e.jax_version, "0.10.2");
  EXPECT_EQ(e.libtpu_version, "0.0.42.1");
  ASSERT_TRUE(e.max_abs_err.has_value());
  EXPECT_DOUBLE_EQ(*e.max_abs_err, 0.5);
  EXPECT_NE(e.stage_ms_json.find("\"numerics\":200.25"), std::string::npos) << e.stage_ms_json;
}

// A verdict this build does not know cannot enter the store as itself.
TEST(RecordConversionsTest, AnUnknownVerdictIsStoredAsACrashNamingIt) {
  const EvaluationRecord e = record_from_result(42, result("totally_correct_trust_me"));
  EXPECT_EQ(e.verdict, Verdict::crash);
  EXPECT_NE(e.error_text.find("totally_correct_trust_me"), std::string::npos) << e.error_text;
  EXPECT_NE(e.error_text.find("agent-1"), std::string::npos) << e.error_text;
}

}  // namespace
}  // namespace palladium
