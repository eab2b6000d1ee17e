#include "search/iterative_search.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace palladium {
namespace {

WorkloadBrief gemm_brief() {
  return {"8p", "GEMM",
          "ID = '8p'\ndef workload(a, b):\n  return BASELINE_MARKER(a @ b)\n",
          ""};
}

// A scripted evaluator: sample k gets a numerics_mismatch with an error
// naming k, except every third sample, which is correct at 1.5x.
EvalOutcome fake_evaluate(int k) {
  EvalOutcome o;
  if (k % 3 == 2) {
    o.verdict = Verdict::correct;
    o.stage = "done";
    o.kernel_ms = 2.0;
    o.baseline_ms = 3.0;
    o.timing_kind = "cpu-wall";
  } else {
    o.verdict = Verdict::numerics_mismatch;
    o.stage = "numerics";
    o.error = "max_abs_err too large ERROR_OF_SAMPLE_" + std::to_string(k);
  }
  return o;
}

std::string fake_code(int k) {
  return "def workload(a, b):  # CODE_OF_SAMPLE_" + std::to_string(k) + "\n";
}

TEST(IterativeSearchTest, RespectsBudgetAndNumbersSamples) {
  IterativeSearch s(gemm_brief(), 5);
  std::vector<int> indices;
  while (auto req = s.next()) {
    indices.push_back(req->sample_index);
    s.record(req->sample_index, fake_code(req->sample_index),
             fake_evaluate(req->sample_index));
  }
  EXPECT_EQ(indices, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.generated(), 5);
  EXPECT_EQ(s.budget(), 5);
  EXPECT_FALSE(s.next().has_value());
}

TEST(IterativeSearchTest, FeedbackOfSampleKAppearsInPromptKPlusOne) {
  IterativeSearch s(gemm_brief(), 4);
  std::vector<SampleRequest> requests;
  while (auto req = s.next()) {
    requests.push_back(*req);
    s.record(req->sample_index, fake_code(req->sample_index),
             fake_evaluate(req->sample_index));
  }
  ASSERT_EQ(requests.size(), 4u);

  // Sample 0: baseline only, no feedback.
  EXPECT_FALSE(requests[0].parent_sample.has_value());
  EXPECT_NE(requests[0].user_prompt.find("BASELINE_MARKER"), std::string::npos);
  EXPECT_EQ(requests[0].user_prompt.find("CODE_OF_SAMPLE"), std::string::npos);

  for (int k = 0; k + 1 < 4; ++k) {
    const std::string& p = requests[k + 1].user_prompt;
    EXPECT_EQ(requests[k + 1].parent_sample, k);
    EXPECT_NE(p.find("BASELINE_MARKER"), std::string::npos);
    EXPECT_NE(p.find("CODE_OF_SAMPLE_" + std::to_string(k)), std::string::npos)
        << "prompt " << k + 1;
    EXPECT_NE(p.find(std::string(to_string(fake_evaluate(k).verdict))),
              std::string::npos);
    EXPECT_NE(p.find("stage: " + fake_evaluate(k).stage), std::string::npos);
    // Only the last candidate is fed back.
    if (k > 0) {
      EXPECT_EQ(p.find("CODE_OF_SAMPLE_" + std::to_string(k - 1)),
                std::string::npos);
    }
  }
  // Sample 1 failed: its error is in prompt 2.
  EXPECT_NE(requests[2].user_prompt.find("ERROR_OF_SAMPLE_1"),
            std::string::npos);
  // Sample 2 was correct at 3.0 / 2.0: prompt 3 carries the speedup and its
  // timing kind, and no error block.
  EXPECT_NE(requests[3].user_prompt.find("1.500x"), std::string::npos);
  EXPECT_NE(requests[3].user_prompt.find("cpu-wall"), std::string::npos);
  EXPECT_EQ(requests[3].user_prompt.find("ERROR_OF_SAMPLE"), std::string::npos);
}

TEST(IterativeSearchTest, NoRequestWhileOneIsOutstanding) {
  IterativeSearch s(gemm_brief(), 3);
  auto first = s.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(s.next().has_value());
  EXPECT_FALSE(s.next().has_value());
  EXPECT_FALSE(s.done());
  EXPECT_EQ(s.generated(), 1);
  s.record(first->sample_index, "", fake_evaluate(0));
  auto second = s.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->sample_index, 1);
}

TEST(IterativeSearchTest, WrongIndexThrowsNamingTheIndex) {
  IterativeSearch s(gemm_brief(), 3);
  // Nothing outstanding yet.
  EXPECT_THROW(s.record(0, "", fake_evaluate(0)), std::logic_error);
  auto req = s.next();
  ASSERT_TRUE(req.has_value());
  try {
    s.record(7, "", fake_evaluate(7));
    FAIL() << "record(7) did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  // The failed call changed nothing: sample 0 is still outstanding.
  EXPECT_FALSE(s.next().has_value());
  s.record(0, "", fake_evaluate(0));
  // Recording the same sample twice is also unexpected.
  EXPECT_THROW(s.record(0, "", fake_evaluate(0)), std::logic_error);
}

TEST(IterativeSearchTest, ZeroBudgetIsDoneAndNegativeThrows) {
  IterativeSearch s(gemm_brief(), 0);
  EXPECT_TRUE(s.done());
  EXPECT_FALSE(s.next().has_value());
  EXPECT_THROW(IterativeSearch(gemm_brief(), -1), std::invalid_argument);
}

TEST(IterativeSearchTest, SystemPromptStatesTaskAndFormat) {
  IterativeSearch s(gemm_brief(), 1);
  auto req = s.next();
  ASSERT_TRUE(req.has_value());
  const std::string& sys = req->system_prompt;
  EXPECT_NE(sys.find("workload(*inputs)"), std::string::npos);
  EXPECT_NE(sys.find("jax.experimental.pallas"), std::string::npos);
  EXPECT_NE(sys.find("TPU v6e"), std::string::npos);
  EXPECT_NE(sys.find("```python"), std::string::npos);
}

TEST(IterativeSearchTest, ContextGoesIntoEveryPromptOnlyWhenAsked) {
  WorkloadBrief brief = gemm_brief();
  brief.context = "## TPU v6e\nCONTEXT_BLOCK_MARKER\n";
  IterativeSearch plain(brief, 2);
  IterativeSearch with(brief, 2, /*with_context=*/true);
  for (int k = 0; k < 2; ++k) {
    auto a = plain.next();
    auto b = with.next();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->system_prompt.find("CONTEXT_BLOCK_MARKER"), std::string::npos);
    EXPECT_NE(b->system_prompt.find("CONTEXT_BLOCK_MARKER"), std::string::npos);
    plain.record(k, fake_code(k), fake_evaluate(k));
    with.record(k, fake_code(k), fake_evaluate(k));
  }
  EXPECT_THROW(IterativeSearch(gemm_brief(), 2, true), std::invalid_argument);
}

TEST(IterativeSearchTest, NoCodeFeedbackSaysSo) {
  IterativeSearch s(gemm_brief(), 2);
  s.next();
  EvalOutcome none;
  none.verdict = Verdict::no_code;
  none.stage = "extract";
  s.record(0, "", none);
  auto req = s.next();
  ASSERT_TRUE(req.has_value());
  EXPECT_NE(req->user_prompt.find("no ```python code block"), std::string::npos);
  EXPECT_NE(req->user_prompt.find("no_code"), std::string::npos);
}

TEST(IterativeSearchTest, LongErrorIsTruncatedKeepingItsTail) {
  IterativeSearch s(gemm_brief(), 2);
  s.next();
  EvalOutcome o;
  o.verdict = Verdict::lowering_error;
  o.stage = "lower";
  o.error = "Traceback HEAD_OF_ERROR\n" + std::string(50000, 'x') +
            "\nMosaicError: TAIL_OF_ERROR";
  s.record(0, fake_code(0), o);
  auto req = s.next();
  ASSERT_TRUE(req.has_value());
  const std::string& p = req->user_prompt;
  EXPECT_NE(p.find("HEAD_OF_ERROR"), std::string::npos);
  EXPECT_NE(p.find("TAIL_OF_ERROR"), std::string::npos);
  EXPECT_NE(p.find("characters omitted"), std::string::npos);
  EXPECT_LT(p.size(), 2 * kMaxFeedbackErrorChars + 2000);
}

TEST(IterativeSearchTest, SameHistoryGivesIdenticalRequests) {
  IterativeSearch a(gemm_brief(), 3);
  IterativeSearch b(gemm_brief(), 3);
  for (int k = 0; k < 3; ++k) {
    auto ra = a.next();
    auto rb = b.next();
    ASSERT_TRUE(ra && rb);
    EXPECT_EQ(ra->system_prompt, rb->system_prompt);
    EXPECT_EQ(ra->user_prompt, rb->user_prompt);
    EXPECT_EQ(ra->parent_sample, rb->parent_sample);
    a.record(k, fake_code(k), fake_evaluate(k));
    b.record(k, fake_code(k), fake_evaluate(k));
  }
}

TEST(TruncateMiddleTest, KeepsShortTextAndExactBudget) {
  EXPECT_EQ(truncate_middle("abc", 3, 1), "abc");
  const std::string out = truncate_middle("0123456789", 4, 1);
  EXPECT_EQ(out.substr(0, 1), "0");
  EXPECT_EQ(out.substr(out.size() - 3), "789");
  EXPECT_NE(out.find("[6 characters omitted]"), std::string::npos);
  EXPECT_THROW(truncate_middle("abc", 1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
