// Provider prompt caches (OpenAI from 1,024 tokens, Gemini implicitly) bill a repeated prompt
// prefix at a tenth of the input price, so every method keeps the stable part of its prompts
// first and byte-identical: the system text and the context blocks, then the workload's
// header (and, for the iterative methods, its baseline source); what varies (the parent,
// the feedback, the plan) comes after. One test per method.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "search/autocomp_search.hpp"
#include "search/iterative_search.hpp"
#include "tests/search/fake_world.hpp"

namespace palladium {
namespace {

const char* kBaseline = "BASELINE_SOURCE\ndef workload(a, b):\n  return a @ b\n";

WorkloadBrief brief() {
  return {"8p", "GEMM", kBaseline, "## TPU v6e\nCONTEXT_BLOCKS\n"};
}

size_t common_prefix(const std::string& a, const std::string& b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()),
                                           b.begin())
                                 .first -
                             a.begin());
}

// Every request of one role has the same system prompt, and every user prompt shares the
// first one's first `stable_user` bytes; returns the shortest shared user prefix.
size_t check_prefix(const testing::RunLog& log, SampleRole role) {
  const SampleRequest* first = nullptr;
  size_t shared = std::string::npos;
  for (const auto& r : log.issued) {
    if (r.role != role) continue;
    if (!first) {
      first = &r;
      continue;
    }
    EXPECT_EQ(r.system_prompt, first->system_prompt) << "sample " << r.sample_index;
    shared = std::min(shared, common_prefix(first->user_prompt, r.user_prompt));
  }
  EXPECT_NE(first, nullptr) << "no request of role " << to_string(role);
  return shared;
}

TEST(PromptPrefixTest, IterativePromptsShareSystemContextAndTheWholeBaseline) {
  for (bool context : {false, true}) {
    IterativeSearch s(brief(), Budget(6), IterativeConfig{context, {}});
    testing::FakeWorld w;
    auto log = testing::run(s, w, 1);
    ASSERT_EQ(log.issued.size(), 6u);
    const size_t shared = check_prefix(log, SampleRole::code);
    const std::string& u = log.issued.front().user_prompt;
    const size_t baseline_end = u.find(kBaseline) + std::string(kBaseline).size();
    ASSERT_NE(u.find(kBaseline), std::string::npos);
    EXPECT_GE(shared, baseline_end) << "the feedback must come after the baseline";
    EXPECT_EQ(log.issued.front().system_prompt.find("CONTEXT_BLOCKS") != std::string::npos,
              context);
  }
}

TEST(PromptPrefixTest, BeamPromptsShareTheirRolesSystemContextAndTheWorkloadHeader) {
  AutocompConfig cfg;
  cfg.beam_size = 2;
  cfg.plans_per_parent = 2;
  cfg.codes_per_plan = 2;
  cfg.policy.kind = PhasePolicyConfig::fixed_fraction;
  cfg.policy.translate_fraction = 0.5;
  cfg.with_context = true;
  StrategyMenus menus{{"TRANSLATE_A", "TRANSLATE_B"}, {"OPT_1", "OPT_2", "OPT_3"}};
  AutocompSearch s(brief(), Budget(60), cfg, menus, 7);
  testing::FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    return r.sample_index % 2 ? testing::correct(1.0 + r.sample_index / 100.0) : testing::wrong();
  };
  auto log = testing::run(s, w);
  const std::string header = "## Workload 8p: GEMM\n";
  for (SampleRole role : {SampleRole::plan, SampleRole::code}) {
    const size_t shared = check_prefix(log, role);
    EXPECT_GE(shared, header.size()) << to_string(role);
  }
  for (const auto& r : log.issued) {
    EXPECT_EQ(r.user_prompt.rfind(header, 0), 0u) << to_string(r.role);
    EXPECT_NE(r.system_prompt.find("CONTEXT_BLOCKS"), std::string::npos);
    // The context blocks end the system prompt: nothing that varies sits before them.
    EXPECT_EQ(r.system_prompt.substr(r.system_prompt.size() - 15), "CONTEXT_BLOCKS\n");
  }
}

}  // namespace
}  // namespace palladium
