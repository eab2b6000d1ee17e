#include "report/llm_usage_report.hpp"

#include <gtest/gtest.h>

#include "report/run_report.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

// Two cells of a sweep: the first pays for three answers of one OpenAI call (one cut off at the
// output limit, part of the prompt from the provider's cache), the second asks one of the same
// prompts again and reuses its stored answer.
class LlmUsageReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = RunStore::open(tmp_.path());
    first_ = store_->begin_or_resume_run("cell a", "workloads: [8p, 9p]");
    second_ = store_->begin_or_resume_run("cell b", "workloads: [8p]");
    LlmCallRecord call;
    call.run_id = first_;
    call.provider = "openai";
    call.model = "gpt-x";
    call.samples = 3;
    call.prompt_tokens = 3000;
    call.cached_prompt_tokens = 2048;
    call.completion_tokens = 600;
    call.cost_usd = 0.0090;
    call.cache_saved_usd = 0.0012;
    call.batch_id = "batch_1";
    std::vector<LlmResponseRecord> answers;
    for (int k = 0; k < 3; ++k) {
      LlmResponseRecord r;
      r.provider = "openai";
      r.model = "gpt-x";
      r.sample_index = k;
      r.prompt_system = "system";
      r.prompt_user = "user";
      r.text = "code " + std::to_string(k);
      r.finish_reason = k == 2 ? "length" : "stop";
      r.prompt_tokens = 1000;
      r.cached_prompt_tokens = 682;
      r.completion_tokens = 200;
      r.cost_usd = 0.0030;
      answers.push_back(r);
    }
    const auto put = store_->put_answered_call(call, answers);
    const char* workloads[] = {"8p", "8p", "9p"};
    for (int k = 0; k < 3; ++k) add(first_, workloads[k], k, put.responses[k].id);
    add(second_, "8p", 0, put.responses[0].id);
  }

  void add(int64_t run, const std::string& workload, int index, int64_t response_id) {
    SampleRecord s;
    s.run_id = run;
    s.workload = workload;
    s.method = "iterative";
    s.sample_index = index;
    s.prompt_system = "system";
    s.prompt_user = "user";
    s.code = "code";
    s.response_id = response_id;
    store_->put_sample(s);
  }

  TempDb tmp_;
  std::unique_ptr<RunStore> store_;
  int64_t first_ = 0, second_ = 0;
};

TEST_F(LlmUsageReportTest, ThePayingRunShowsItsCacheHitsSavingsAndCutOffAnswers) {
  const LlmUsageSummary u = summarize_llm_usage(*store_, first_);
  EXPECT_EQ(u.calls, 1);
  EXPECT_EQ(u.batch_calls, 1);
  EXPECT_NEAR(*u.cache_hit_share(), 2048.0 / 3000.0, 1e-12);
  EXPECT_NEAR(*u.cache_saved_usd, 0.0012, 1e-12);
  EXPECT_EQ(u.paid_answers, 3);
  EXPECT_EQ(u.reused_answers, 0);
  EXPECT_EQ(u.truncated, 1);
  EXPECT_EQ(u.truncated_by_workload, (std::map<std::string, int64_t>{{"9p", 1}}));

  const nlohmann::json r = report_json(*store_, first_, {"8p", "9p"});
  EXPECT_NEAR(r["llm"]["cache_hit_share"].get<double>(), 2048.0 / 3000.0, 1e-12);
  EXPECT_NEAR(r["llm"]["cache_saved_usd"].get<double>(), 0.0012, 1e-12);
  EXPECT_EQ(r["llm"]["truncated_by_workload"]["9p"], 1);
  const std::string text = report_text(*store_, first_, {"8p", "9p"});
  EXPECT_NE(text.find("LLM: 1 calls (1 in batch jobs, at the batch price)"), std::string::npos) << text;
  EXPECT_NE(text.find("68.3% of prompt tokens (2048) served from the provider's cache, which saved "
                      "$0.0012"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cut off at output limit 1 answers (9p 1)"), std::string::npos) << text;
}

TEST_F(LlmUsageReportTest, AReusedAnswerIsChargedToTheRunThatPaidAndCountedAsReused) {
  const LlmUsageSummary u = summarize_llm_usage(*store_, second_);
  EXPECT_EQ(u.calls, 0);
  EXPECT_FALSE(u.cache_hit_share());  // no call of its own: no cache share to speak of
  EXPECT_EQ(u.paid_answers, 0);
  EXPECT_EQ(u.reused_answers, 1);
  EXPECT_EQ(u.reused_prompt_tokens, 1000);
  EXPECT_EQ(u.reused_output_tokens, 200);
  EXPECT_DOUBLE_EQ(u.paid_usd, 0.0);
  EXPECT_NEAR(u.alone_usd(), 0.0030, 1e-12);
  const std::string text = report_text(*store_, second_, {"8p"});
  EXPECT_NE(text.find("0 paid by this run (0 prompt / 0 output tokens, $0.0000), 1 reused from the "
                      "response cache (1000 / 200, $0.0030, charged to the run that paid); alone it "
                      "would cost $0.0030"),
            std::string::npos)
      << text;
}

TEST_F(LlmUsageReportTest, AnOfflineRunsReportHasNoLlmBlock) {
  const int64_t offline = store_->begin_or_resume_run("quick", "method: iterative\nworkloads: [8p]");
  LlmCallRecord call;
  call.run_id = offline;
  call.provider = "synthetic";
  call.model = "synthetic";
  call.tokens_estimated = true;
  call.prompt_tokens = 500;
  store_->put_llm_call(call);
  EXPECT_EQ(llm_usage_text(summarize_llm_usage(*store_, offline)), "");
  EXPECT_EQ(report_text(*store_, offline, {"8p"}).find("\nLLM:"), std::string::npos);
  // The JSON still carries the counts, for tools.
  EXPECT_EQ(report_json(*store_, offline, {"8p"})["llm"]["calls"], 1);
}

}  // namespace
}  // namespace palladium
