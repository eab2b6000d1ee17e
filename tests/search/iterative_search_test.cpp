#include "search/iterative_search.hpp"

#include <gtest/gtest.h>

#include <optional>
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

Observation fake_observation(int k) {
  return {"```python\n" + fake_code(k) + "```\n", fake_code(k), fake_evaluate(k)};
}

Observation observation_of(const std::string& code, const EvalOutcome& o) {
  return {code, code, o};
}

// The one request the loop has ready, or nullopt.
std::optional<SampleRequest> next(IterativeSearch& s) {
  auto reqs = s.propose(4);
  EXPECT_LE(reqs.size(), 1u) << "the iterative loop offers one sample at a time";
  if (reqs.empty()) return std::nullopt;
  return reqs.front();
}

TEST(IterativeSearchTest, RespectsBudgetAndNumbersSamples) {
  IterativeSearch s(gemm_brief(), Budget(5));
  std::vector<int> indices;
  while (auto req = next(s)) {
    indices.push_back(req->sample_index);
    EXPECT_EQ(req->role, SampleRole::code);
    EXPECT_EQ(req->phase, Phase::iterate);
    s.observe(req->sample_index, fake_observation(req->sample_index));
  }
  EXPECT_EQ(indices, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.budget().spent(), 5);
  EXPECT_EQ(s.budget().issued(SampleRole::code), 5);
  EXPECT_FALSE(next(s).has_value());
  EXPECT_EQ(s.status().stop_reason, "budget spent");
}

TEST(IterativeSearchTest, FeedbackOfSampleKAppearsInPromptKPlusOne) {
  IterativeSearch s(gemm_brief(), Budget(4));
  std::vector<SampleRequest> requests;
  while (auto req = next(s)) {
    requests.push_back(*req);
    s.observe(req->sample_index, fake_observation(req->sample_index));
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
  IterativeSearch s(gemm_brief(), Budget(3));
  auto first = next(s);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(next(s).has_value());
  EXPECT_FALSE(next(s).has_value());
  EXPECT_FALSE(s.done());
  EXPECT_EQ(s.outstanding(), 1);
  EXPECT_EQ(s.budget().spent(), 1);
  s.observe(first->sample_index, observation_of("", fake_evaluate(0)));
  auto second = next(s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->sample_index, 1);
}

TEST(IterativeSearchTest, WrongIndexThrowsNamingTheIndex) {
  IterativeSearch s(gemm_brief(), Budget(3));
  // Nothing outstanding yet.
  EXPECT_THROW(s.observe(0, fake_observation(0)), std::logic_error);
  auto req = next(s);
  ASSERT_TRUE(req.has_value());
  try {
    s.observe(7, fake_observation(7));
    FAIL() << "observe(7) did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  // A code sample without its evaluation is refused too.
  EXPECT_THROW(s.observe(0, Observation{"text", "", std::nullopt}), std::logic_error);
  // The failed calls changed nothing: sample 0 is still outstanding.
  EXPECT_FALSE(next(s).has_value());
  s.observe(0, fake_observation(0));
  // Observing the same sample twice is also unexpected.
  EXPECT_THROW(s.observe(0, fake_observation(0)), std::logic_error);
}

TEST(IterativeSearchTest, ZeroBudgetIsDoneAndNegativeThrows) {
  IterativeSearch s(gemm_brief(), Budget(0));
  EXPECT_TRUE(s.done());
  EXPECT_FALSE(next(s).has_value());
  EXPECT_THROW(Budget(-1), std::invalid_argument);
}

TEST(IterativeSearchTest, OpenBudgetWaitsIdleThenResumesWhenItGrows) {
  Budget b(1);
  b.set_open(true);
  IterativeSearch s(gemm_brief(), b);
  auto first = next(s);
  ASSERT_TRUE(first.has_value());
  s.observe(0, fake_observation(0));
  EXPECT_FALSE(next(s).has_value());
  EXPECT_FALSE(s.done());
  EXPECT_TRUE(s.status().idle);
  EXPECT_EQ(s.status().wanted, 1);
  s.budget().set_limit(2);
  auto second = next(s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->sample_index, 1);
  s.observe(1, fake_observation(1));
  s.budget().set_open(false);
  EXPECT_TRUE(s.done());
  EXPECT_FALSE(s.status().idle);
}

TEST(IterativeSearchTest, EarlyStopEndsLoopWhenBestStopsImproving) {
  // Samples 0..: correct at the same speed every time, so after the first
  // correct one the best never improves; window 2 stops the loop once two
  // samples passed without improvement.
  IterativeConfig config;
  config.early_stop = {2, 1.0};
  IterativeSearch s(gemm_brief(), Budget(20), config);
  EvalOutcome ok;
  ok.verdict = Verdict::correct;
  ok.kernel_ms = 2.0;
  ok.baseline_ms = 3.0;
  int n = 0;
  while (auto req = next(s)) {
    s.observe(req->sample_index, observation_of(fake_code(n), ok));
    ++n;
  }
  // losses before samples 0..3: inf, 2/3, 2/3, 2/3. Before sample 3
  // (generation 4): losses[3] / losses[1] = 1 >= 1 -> stop after 3 samples.
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.status().stop_reason, "early stop");
  EXPECT_EQ(s.budget().spent(), 3);
}

TEST(IterativeSearchTest, StatusTracksBestCandidate) {
  IterativeSearch s(gemm_brief(), Budget(6));
  while (auto req = next(s)) s.observe(req->sample_index, fake_observation(req->sample_index));
  SearchStatus st = s.status();
  EXPECT_EQ(st.candidates, 6);
  EXPECT_EQ(st.correct, 2);  // samples 2 and 5
  ASSERT_TRUE(st.best.has_value());
  EXPECT_EQ(st.best->sample_index, 2);  // first of the equally fast ones
  EXPECT_DOUBLE_EQ(st.best->speedup, 1.5);
  EXPECT_EQ(st.best_after, (std::vector<double>{1.0, 1.0, 1.5, 1.5, 1.5, 1.5}));
  EXPECT_EQ(st.best_by_phase.count(Phase::iterate), 1u);
}

TEST(IterativeSearchTest, SystemPromptStatesTaskAndFormat) {
  IterativeSearch s(gemm_brief(), Budget(1));
  auto req = next(s);
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
  IterativeSearch plain(brief, Budget(2));
  IterativeSearch with(brief, Budget(2), IterativeConfig{true, {}});
  EXPECT_EQ(plain.method(), "iterative");
  EXPECT_EQ(with.method(), "iterative_context");
  for (int k = 0; k < 2; ++k) {
    auto a = next(plain);
    auto b = next(with);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->system_prompt.find("CONTEXT_BLOCK_MARKER"), std::string::npos);
    EXPECT_NE(b->system_prompt.find("CONTEXT_BLOCK_MARKER"), std::string::npos);
    plain.observe(k, fake_observation(k));
    with.observe(k, fake_observation(k));
  }
  EXPECT_THROW(IterativeSearch(gemm_brief(), Budget(2), IterativeConfig{true, {}}),
               std::invalid_argument);
}

TEST(IterativeSearchTest, NoCodeFeedbackSaysSo) {
  IterativeSearch s(gemm_brief(), Budget(2));
  next(s);
  EvalOutcome none;
  none.verdict = Verdict::no_code;
  none.stage = "extract";
  s.observe(0, observation_of("", none));
  auto req = next(s);
  ASSERT_TRUE(req.has_value());
  EXPECT_NE(req->user_prompt.find("no ```python code block"), std::string::npos);
  EXPECT_NE(req->user_prompt.find("no_code"), std::string::npos);
}

TEST(IterativeSearchTest, LongErrorIsTruncatedKeepingItsTail) {
  IterativeSearch s(gemm_brief(), Budget(2));
  next(s);
  EvalOutcome o;
  o.verdict = Verdict::lowering_error;
  o.stage = "lower";
  o.error = "Traceback HEAD_OF_ERROR\n" + std::string(50000, 'x') +
            "\nMosaicError: TAIL_OF_ERROR";
  s.observe(0, observation_of(fake_code(0), o));
  auto req = next(s);
  ASSERT_TRUE(req.has_value());
  const std::string& p = req->user_prompt;
  EXPECT_NE(p.find("HEAD_OF_ERROR"), std::string::npos);
  EXPECT_NE(p.find("TAIL_OF_ERROR"), std::string::npos);
  EXPECT_NE(p.find("characters omitted"), std::string::npos);
  EXPECT_LT(p.size(), 2 * kMaxFeedbackErrorChars + 2000);
}

TEST(IterativeSearchTest, ACutOffAnswerIsNamedInTheNextPromptOnly) {
  IterativeSearch s(gemm_brief(), Budget(3));
  next(s);
  Observation cut = fake_observation(0);
  cut.truncated = true;
  s.observe(0, cut);
  auto after_cut = next(s);
  ASSERT_TRUE(after_cut.has_value());
  EXPECT_NE(after_cut->user_prompt.find("Your previous answer was cut off"), std::string::npos);
  s.observe(1, fake_observation(1));
  auto after_whole = next(s);
  ASSERT_TRUE(after_whole.has_value());
  EXPECT_EQ(after_whole->user_prompt.find("cut off"), std::string::npos);
}

TEST(IterativeSearchTest, SameHistoryGivesIdenticalRequests) {
  IterativeSearch a(gemm_brief(), Budget(3));
  IterativeSearch b(gemm_brief(), Budget(3));
  for (int k = 0; k < 3; ++k) {
    auto ra = next(a);
    auto rb = next(b);
    ASSERT_TRUE(ra && rb);
    EXPECT_EQ(ra->system_prompt, rb->system_prompt);
    EXPECT_EQ(ra->user_prompt, rb->user_prompt);
    EXPECT_EQ(ra->parent_sample, rb->parent_sample);
    a.observe(k, fake_observation(k));
    b.observe(k, fake_observation(k));
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
