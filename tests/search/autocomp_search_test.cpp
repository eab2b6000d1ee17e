// The two-phase beam search against a fake LLM and evaluator: one test per
// rule of autocomp.md §1.3-1.8 and per choice documented in
// search/autocomp_search.hpp.
#include "search/autocomp_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/search/fake_world.hpp"

namespace palladium {
namespace {

using testing::correct;
using testing::count_role;
using testing::FakeWorld;
using testing::run;
using testing::wrong;

WorkloadBrief brief() {
  return {"8p", "GEMM", "BASELINE_SOURCE_MARKER\ndef workload(a, b):\n  return a @ b\n", ""};
}

StrategyMenus menus() {
  return {{"TRANSLATE_A", "TRANSLATE_B", "TRANSLATE_C"},
          {"OPT_1", "OPT_2", "OPT_3", "OPT_4", "OPT_5", "OPT_6", "OPT_7", "OPT_8"}};
}

AutocompConfig config(int b, int p, int c, double translate_fraction = 0.5) {
  AutocompConfig cfg;
  cfg.beam_size = b;
  cfg.plans_per_parent = p;
  cfg.codes_per_plan = c;
  cfg.policy.kind = PhasePolicyConfig::fixed_fraction;
  cfg.policy.translate_fraction = translate_fraction;
  return cfg;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::vector<int> indices(const std::vector<SampleRequest>& reqs) {
  std::vector<int> out;
  for (auto& r : reqs) out.push_back(r.sample_index);
  return out;
}

// Observes request `r` of `s` with the world's answer.
void answer(AutocompSearch& s, const FakeWorld& w, const SampleRequest& r) {
  s.observe(r.sample_index, w.answer(r));
}

// Answers everything generation 1 asks for, and nothing after it.
void run_first_generation(AutocompSearch& s, const FakeWorld& w) {
  std::vector<SampleRequest> pending = s.propose(100);
  while (!pending.empty() && s.generations_finished() == 0) {
    auto r = pending.front();
    pending.erase(pending.begin());
    answer(s, w, r);
    for (auto& n : s.propose(100)) pending.push_back(n);
  }
}

TEST(AutocompSearchTest, FirstGenerationOffersEveryPlanAtOnceThenEachPlansCodes) {
  AutocompSearch s(brief(), Budget(100), config(4, 4, 2), menus(), 7);
  auto plans = s.propose(100);
  // One parent (the root), P = 4 plans; indices leave room for each plan's C = 2 codes.
  EXPECT_EQ(indices(plans), (std::vector<int>{0, 3, 6, 9}));
  for (auto& r : plans) {
    EXPECT_EQ(r.role, SampleRole::plan);
    EXPECT_EQ(r.phase, Phase::translate);
    EXPECT_EQ(r.generation, 1);
    EXPECT_FALSE(r.parent_sample.has_value());  // the root
  }
  EXPECT_TRUE(s.propose(100).empty());  // codes wait for their plan
  FakeWorld w;
  answer(s, w, plans[1]);
  auto codes = s.propose(100);
  EXPECT_EQ(indices(codes), (std::vector<int>{4, 5}));
  for (auto& r : codes) {
    EXPECT_EQ(r.role, SampleRole::code);
    EXPECT_EQ(r.plan_sample, 3);
    EXPECT_EQ(r.plan, "PLAN_3");
    EXPECT_TRUE(has(r.user_prompt, "<plan>\nPLAN_3\n</plan>"));
    EXPECT_TRUE(has(r.user_prompt, "BASELINE_SOURCE_MARKER"));
  }
}

TEST(AutocompSearchTest, EachGenerationHasBeamTimesPlansTimesCodesCandidates) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) { return correct(1.0 + r.sample_index * 0.01); };
  AutocompSearch s(brief(), Budget(8 + 3 * 8), config(3, 4, 2, 1.0), menus(), 1);
  auto log = run(s, w);
  std::map<int, int> codes_per_generation;
  for (auto& r : log.issued) {
    if (r.role == SampleRole::code) codes_per_generation[r.generation]++;
  }
  // Generation 1: the root x 4 x 2; generation 2: a beam of 3 x 4 x 2.
  EXPECT_EQ(codes_per_generation[1], 8);
  EXPECT_EQ(codes_per_generation[2], 24);
}

TEST(AutocompSearchTest, TranslationPlansListTheWholeTranslationMenuWithoutDropout) {
  AutocompSearch s(brief(), Budget(100), config(4, 4, 2), menus(), 7);
  for (auto& r : s.propose(100)) {
    for (auto& m : menus().translate) EXPECT_TRUE(has(r.user_prompt, m)) << m;
    EXPECT_FALSE(has(r.user_prompt, "OPT_1"));
    EXPECT_TRUE(has(r.user_prompt, "translation round 1"));
    EXPECT_TRUE(has(r.user_prompt, "Do not add fallback paths."));
  }
}

TEST(AutocompSearchTest, OneScoreSampleForEachCorrectTranslationCandidate) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    return r.sample_index % 2 == 0 ? correct(1.5) : wrong();
  };
  AutocompSearch s(brief(), Budget(8), config(4, 4, 2, 1.0), menus(), 3);
  auto log = run(s, w);
  std::set<int> correct_codes, scored;
  for (auto& r : log.issued) {
    if (r.role == SampleRole::code && r.sample_index % 2 == 0) correct_codes.insert(r.sample_index);
    if (r.role == SampleRole::score) {
      ASSERT_TRUE(r.parent_sample.has_value());
      scored.insert(*r.parent_sample);
      EXPECT_TRUE(has(r.user_prompt, "CODE_" + std::to_string(*r.parent_sample)));
      EXPECT_TRUE(has(r.user_prompt, "BASELINE_SOURCE_MARKER"));
      EXPECT_TRUE(has(r.user_prompt, "SCORE: <n>"));
      EXPECT_EQ(r.phase, Phase::translate);
    }
  }
  EXPECT_EQ(scored, correct_codes);
  EXPECT_EQ(s.translation_score(*correct_codes.begin()), 5.0);
}

TEST(AutocompSearchTest, TranslationBeamIsSortedByScoreNotSpeed) {
  FakeWorld w;
  // Codes 1 (fast, score 4) and 3 (slow, score 8).
  w.evaluate = [](const SampleRequest& r) { return correct(r.sample_index == 1 ? 3.0 : 0.5); };
  w.score = [](const SampleRequest& r) {
    return std::string(*r.parent_sample == 1 ? "SCORE: 4" : "SCORE: 8");
  };
  AutocompSearch s(brief(), Budget(20), config(1, 2, 1, 0.5), menus(), 3);
  // Generation 1: 2 plans, 2 codes, 2 scores.
  run_first_generation(s, w);
  EXPECT_EQ(s.generations_finished(), 1);
  EXPECT_EQ(s.beam(), (std::vector<int>{3}));
}

TEST(AutocompSearchTest, ScoreExitAtNineEndsTranslationAndDropsTheRoot) {
  FakeWorld w;
  // Only code 1 of generation 1 is correct; it scores 9.
  w.evaluate = [](const SampleRequest& r) {
    return r.generation == 1 && r.sample_index == 1 ? correct(0.8) : wrong();
  };
  w.score = [](const SampleRequest&) { return std::string("SCORE: 9"); };
  AutocompSearch s(brief(), Budget(40), config(3, 2, 1, 0.9), menus(), 3);
  auto log = run(s, w);
  EXPECT_EQ(s.last_translate_generation(), 1);
  EXPECT_TRUE(s.translation_complete());
  // Without the re-selection the root (score 0) would share the beam with 1.
  for (auto& r : log.issued) {
    if (r.generation >= 2) {
      EXPECT_EQ(r.phase, Phase::optimise);
      EXPECT_EQ(r.parent_sample, 1) << "sample " << r.sample_index;
    }
  }
  EXPECT_EQ(s.beam(), (std::vector<int>{1}));
}

TEST(AutocompSearchTest, RootStaysInTheBeamWhileTranslationGoesOn) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    return r.sample_index == 1 ? correct(0.8) : wrong();
  };
  AutocompSearch s(brief(), Budget(40), config(3, 2, 1, 0.9), menus(), 3);
  run_first_generation(s, w);
  // Score 5 < 9 and budget left for translation: the root stays, after 1.
  EXPECT_EQ(s.beam(), (std::vector<int>{1, kRootId}));
  EXPECT_FALSE(s.translation_complete());
}

TEST(AutocompSearchTest, FixedFractionEndsTranslationAtItsCapAndDropsTheRoot) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) { return r.sample_index == 2 ? correct(0.5) : wrong(); };
  // Cap floor(0.25 * 20) = 5: generation 1 spends 4 (1 x 2 x 2), generation 2
  // only 1 (one plan with one code), then optimisation spends the other 15.
  AutocompSearch s(brief(), Budget(20), config(1, 2, 2, 0.25), menus(), 3);
  auto log = run(s, w);
  EXPECT_EQ(s.translate_spent(), 5);
  EXPECT_EQ(s.last_translate_generation(), 2);
  EXPECT_EQ(s.budget().spent(), 20);
  int translate_codes = 0;
  for (auto& r : log.issued) {
    if (r.generation <= 2) {
      EXPECT_EQ(r.phase, Phase::translate);
    }
    if (r.generation > 2) {
      EXPECT_EQ(r.phase, Phase::optimise);
    }
    if (r.phase == Phase::translate && r.role == SampleRole::code) translate_codes++;
  }
  EXPECT_EQ(translate_codes, 5);
  // Translation ended: the beam holds the translated kernel, not the root.
  auto beam = s.beam();
  EXPECT_EQ(std::count(beam.begin(), beam.end(), kRootId), 0);
}

TEST(AutocompSearchTest, IncorrectCandidatesNeverEnterTheBeamAndAnEmptySelectionKeepsIt) {
  FakeWorld w;  // everything wrong
  AutocompSearch s(brief(), Budget(30), config(4, 2, 2, 0.5), menus(), 3);
  auto log = run(s, w);
  EXPECT_EQ(s.beam(), (std::vector<int>{kRootId}));
  for (auto& r : log.issued) {
    if (r.role != SampleRole::score && r.role != SampleRole::repair) {
      EXPECT_FALSE(r.parent_sample.has_value()) << "sample " << r.sample_index;
    }
  }
  EXPECT_EQ(count_role(log, SampleRole::score), 0);
  EXPECT_TRUE(s.done());
}

// f = 0: optimise from the root at once (Autocomp's translate_iters = 0).
AutocompConfig optimise_only(int b, int p, int c) {
  AutocompConfig cfg = config(b, p, c, 0.0);
  cfg.menu_one_shot = false;
  return cfg;
}

TEST(AutocompSearchTest, KeepFactorIs1p1UpToGeneration2Then1p0) {
  // Every child is 5% slower than its parent.
  std::map<int, int> depth;  // sample index -> depth
  FakeWorld w;
  w.evaluate = [&depth](const SampleRequest& r) {
    int d = r.parent_sample ? depth.at(*r.parent_sample) + 1 : 1;
    depth[r.sample_index] = d;
    return correct(1.0 / std::pow(1.05, d));
  };
  AutocompSearch s(brief(), Budget(1 + 2 + 4), optimise_only(4, 1, 1), menus(), 3);
  auto log = run(s, w);
  // Generation 1: child 1 (1.05 < 1.0 * 1.1) joins the root. Generation 2:
  // children of both join (within 10%). Generation 3 (factor 1.0): no child
  // beats its parent, so the beam is unchanged.
  ASSERT_EQ(s.generations_finished(), 3);
  auto beam = s.beam();
  EXPECT_EQ(beam.size(), 4u);
  for (int id : beam) {
    if (id != kRootId) {
      EXPECT_LE(depth.at(id), 2) << "generation 3 child " << id << " kept";
    }
  }
}

TEST(AutocompSearchTest, DedupKeepsOnlyTheBestImplementationOfEachPlan) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    return correct(r.sample_index == 2 ? 3.0 : (r.sample_index == 1 ? 2.0 : 1.5));
  };
  AutocompSearch s(brief(), Budget(3), optimise_only(4, 1, 3), menus(), 3);
  run(s, w);
  // Codes 1, 2, 3 implement plan 0 of the root: only 2 (3.0x) survives.
  EXPECT_EQ(s.beam(), (std::vector<int>{2, kRootId}));
}

TEST(AutocompSearchTest, OneShotMenuPerParentFeedsThatParentsPlans) {
  AutocompConfig cfg = config(1, 2, 1, 0.0);
  cfg.menu_keep = 1.0;
  AutocompSearch s(brief(), Budget(2), cfg, menus(), 3);
  auto first = s.propose(100);
  ASSERT_EQ(first.size(), 1u);  // the plans wait for the menu
  EXPECT_EQ(first[0].role, SampleRole::menu);
  EXPECT_EQ(first[0].phase, Phase::optimise);
  EXPECT_TRUE(has(first[0].user_prompt, "OPT_8"));
  FakeWorld w;
  answer(s, w, first[0]);
  auto plans = s.propose(100);
  ASSERT_EQ(plans.size(), 2u);
  for (auto& r : plans) {
    EXPECT_EQ(r.role, SampleRole::plan);
    for (std::string m : {"OPT_1", "OPT_8", "NEW_STRATEGY_A", "NEW_STRATEGY_B",
                          "Other methods not listed here."}) {
      EXPECT_TRUE(has(r.user_prompt, m)) << m;
    }
    EXPECT_TRUE(has(r.user_prompt, "optimisation round 1"));
  }
}

TEST(AutocompSearchTest, MenuDropoutKeepsEachOptionWithProbabilityPKeep) {
  auto listed = [](double keep) {
    AutocompConfig cfg = optimise_only(1, 60, 1);
    cfg.menu_keep = keep;
    AutocompSearch s(brief(), Budget(60), cfg, menus(), 11);
    int shown = 0, prompts = 0;
    for (auto& r : s.propose(1000)) {
      prompts++;
      for (auto& m : menus().optimise) shown += has(r.user_prompt, m + "\n") ? 1 : 0;
      shown += has(r.user_prompt, "Other methods not listed here.") ? 1 : 0;
    }
    return static_cast<double>(shown) / (prompts * 9);
  };
  EXPECT_DOUBLE_EQ(listed(1.0), 1.0);
  EXPECT_DOUBLE_EQ(listed(0.0), 0.0);
  const double f = listed(0.25);  // 540 draws: 0.25 +- 4 sigma is [0.175, 0.325]
  EXPECT_GT(f, 0.175);
  EXPECT_LT(f, 0.325);
}

TEST(AutocompSearchTest, PlanningInstructionIsDrawn80To10To10) {
  AutocompSearch s(brief(), Budget(1000), optimise_only(1, 1000, 1), menus(), 5);
  int apply = 0, invent = 0, different = 0;
  for (auto& r : s.propose(2000)) {
    apply += has(r.user_prompt, "apply exactly one of the strategies above");
    invent += has(r.user_prompt, "Invent a new strategy inspired by");
    different += has(r.user_prompt, "Think of a new strategy different from");
  }
  EXPECT_EQ(apply + invent + different, 1000);
  EXPECT_NEAR(apply, 800, 60);
  EXPECT_NEAR(invent, 100, 40);
  EXPECT_NEAR(different, 100, 40);
}

TEST(AutocompSearchTest, RepairPassAddsOneRepairPerFailedCodeWithErrorText) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    switch (r.sample_index) {
      case 1: return wrong(Verdict::lowering_error, "MosaicError: LOWERING_FAILED_1");
      case 2: return wrong(Verdict::no_code, "");  // nothing to repair
      case 4: return correct(2.0);
      case 5: return wrong(Verdict::api_misuse, "AttributeError: API_MISUSE_5");
      case 6: return correct(1.2);  // the repair of 1
      default: return wrong();
    }
  };
  AutocompConfig cfg = config(2, 2, 2, 1.0);
  cfg.repair = true;
  AutocompSearch s(brief(), Budget(6), cfg, menus(), 3);
  auto log = run(s, w);
  // Layout 0..5; then the repairs of 1 and 5, then the score of 4; then the
  // score of the repaired 6.
  ASSERT_EQ(log.by_index.size(), 10u);
  EXPECT_EQ(log.by_index[6].role, SampleRole::repair);
  EXPECT_EQ(log.by_index[6].parent_sample, 1);
  EXPECT_TRUE(has(log.by_index[6].user_prompt, "LOWERING_FAILED_1"));
  EXPECT_TRUE(has(log.by_index[6].user_prompt, "CODE_1"));
  EXPECT_TRUE(has(log.by_index[6].user_prompt, "PLAN_0"));
  EXPECT_EQ(log.by_index[7].role, SampleRole::repair);
  EXPECT_EQ(log.by_index[7].parent_sample, 5);
  EXPECT_EQ(log.by_index[8].role, SampleRole::score);
  EXPECT_EQ(log.by_index[8].parent_sample, 4);
  EXPECT_EQ(log.by_index[9].role, SampleRole::score);
  EXPECT_EQ(log.by_index[9].parent_sample, 6);
  EXPECT_EQ(s.budget().spent(), 6);
  EXPECT_EQ(s.budget().issued(SampleRole::repair), 2);
  // The repaired candidate competes for the beam like any other.
  auto beam = s.beam();
  EXPECT_NE(std::find(beam.begin(), beam.end(), 6), beam.end());
}

TEST(AutocompSearchTest, RepairIsPaidFromTheBudgetAndSkippedWhenNothingIsLeft) {
  FakeWorld w;  // all wrong, with error text
  AutocompConfig cfg = config(1, 2, 2, 1.0);
  cfg.repair = true;
  AutocompSearch s(brief(), Budget(4), cfg, menus(), 3);
  auto log = run(s, w);
  EXPECT_EQ(count_role(log, SampleRole::repair), 0);  // the layout took all 4
  EXPECT_EQ(s.budget().spent(), 4);
}

TEST(AutocompSearchTest, EarlyStopEndsTheSearchAfterTheWindowWithoutImprovement) {
  AutocompConfig cfg = optimise_only(1, 1, 1);
  cfg.early_stop = {2, 1.0};
  FakeWorld w;  // nothing correct: the best stays the root's 1.0
  AutocompSearch s(brief(), Budget(100), cfg, menus(), 3);
  run(s, w);
  // Losses before generations 1, 2, 3: 1, 1, 1 -> generation 3 does not start.
  EXPECT_EQ(s.generations_finished(), 2);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.status().stop_reason, "early stop");
  EXPECT_EQ(s.budget().spent(), 2);
}

TEST(AutocompSearchTest, EarlyStopCountsOnlyAfterTranslationPlusWindow) {
  AutocompConfig cfg = config(1, 1, 1, 0.5);
  cfg.menu_one_shot = false;
  cfg.early_stop = {1, 1.0};
  FakeWorld w;
  AutocompSearch s(brief(), Budget(6), cfg, menus(), 3);
  run(s, w);
  // Translation: generations 1-3 (cap 3). Generation 4 optimises (4 <= 3 + 1
  // cannot stop before it); before generation 5 the ratio 1 stops.
  EXPECT_EQ(s.last_translate_generation(), 3);
  EXPECT_EQ(s.generations_finished(), 4);
  EXPECT_EQ(s.status().stop_reason, "early stop");
}

TEST(AutocompSearchTest, RequestsDoNotDependOnTheOrderAnswersArriveIn) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    uint64_t h = SplitMix64(static_cast<uint64_t>(r.sample_index) * 31 + 7).next();
    if (h % 3 == 0) return wrong(Verdict::runtime_error, "RuntimeError " + std::to_string(h % 97));
    return correct(0.5 + static_cast<double>(h % 1000) / 400.0);
  };
  w.score = [](const SampleRequest& r) {
    return "SCORE: " + std::to_string((*r.parent_sample * 7) % 11);
  };
  for (auto counts : {BudgetCounts::candidates, BudgetCounts::calls}) {
    AutocompConfig cfg = config(3, 3, 2, 0.4);
    cfg.repair = true;
    cfg.menu_keep = 0.5;
    AutocompSearch reference(brief(), Budget(70, counts), cfg, menus(), 99);
    auto ref = run(reference, w);
    EXPECT_GT(ref.max_outstanding, 3);  // several samples really were in flight
    for (uint64_t shuffle : {1, 2, 3}) {
      for (int in_flight : {1, 4, 1000}) {
        AutocompSearch other(brief(), Budget(70, counts), cfg, menus(), 99);
        auto got = run(other, w, in_flight, shuffle);
        ASSERT_EQ(got.by_index.size(), ref.by_index.size()) << shuffle << "/" << in_flight;
        for (auto& [i, r] : ref.by_index) {
          const SampleRequest& g = got.by_index.at(i);
          EXPECT_EQ(g.role, r.role) << i;
          EXPECT_EQ(g.phase, r.phase) << i;
          EXPECT_EQ(g.parent_sample, r.parent_sample) << i;
          EXPECT_EQ(g.user_prompt, r.user_prompt) << i;
          EXPECT_EQ(g.system_prompt, r.system_prompt) << i;
        }
        EXPECT_EQ(other.beam(), reference.beam());
      }
    }
  }
}

TEST(AutocompSearchTest, SeedChangesTheDraws) {
  AutocompSearch a(brief(), Budget(10), optimise_only(1, 10, 1), menus(), 1);
  AutocompSearch b(brief(), Budget(10), optimise_only(1, 10, 1), menus(), 2);
  auto ra = a.propose(100), rb = b.propose(100);
  int differ = 0;
  for (size_t i = 0; i < ra.size(); ++i) differ += ra[i].user_prompt != rb[i].user_prompt;
  EXPECT_GT(differ, 0);
}

TEST(AutocompSearchTest, OpenBudgetWaitsForAWholeGenerationClosedBudgetTruncates) {
  Budget open(3);
  open.set_open(true);
  AutocompSearch waiting(brief(), open, optimise_only(1, 2, 2), menus(), 3);
  EXPECT_TRUE(waiting.propose(100).empty());  // a generation costs 4
  EXPECT_TRUE(waiting.status().idle);
  EXPECT_EQ(waiting.status().wanted, 4);
  waiting.budget().set_limit(4);
  EXPECT_EQ(waiting.propose(100).size(), 2u);

  AutocompSearch truncating(brief(), Budget(3), config(1, 2, 2, 1.0), menus(), 3);
  auto log = run(truncating, FakeWorld{});
  EXPECT_EQ(count_role(log, SampleRole::code), 3);  // plan 0 x 2, plan 1 x 1
  EXPECT_EQ(count_role(log, SampleRole::plan), 2);
}

TEST(AutocompSearchTest, TruncationGivesPlanPOfEveryParentBeforePlanPPlus1) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) { return correct(1.0 + r.sample_index); };
  // Generation 1: 1 x 2 x 1 = 2; generation 2 from a beam of 2 with 3 left:
  // plan 0 of both parents, then plan 1 of the first.
  AutocompSearch s(brief(), Budget(5), config(2, 2, 1, 1.0), menus(), 3);
  auto log = run(s, w);
  std::map<int, int> plans_of_parent;
  for (auto& r : log.issued) {
    if (r.generation == 2 && r.role == SampleRole::plan) plans_of_parent[*r.parent_sample]++;
  }
  ASSERT_EQ(plans_of_parent.size(), 2u);
  std::vector<int> counts;
  for (auto& [p, n] : plans_of_parent) counts.push_back(n);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.budget().spent(), 5);
}

TEST(AutocompSearchTest, CallsModeChargesPlansScoresAndMenus) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest&) { return correct(1.1); };
  AutocompSearch s(brief(), Budget(25, BudgetCounts::calls), config(2, 2, 2, 0.4), menus(), 3);
  auto log = run(s, w);
  EXPECT_EQ(static_cast<int>(log.issued.size()), s.budget().spent());
  EXPECT_LE(s.budget().spent(), 25);
  EXPECT_GT(count_role(log, SampleRole::plan), 0);
  EXPECT_GT(count_role(log, SampleRole::score), 0);
  EXPECT_GT(count_role(log, SampleRole::menu), 0);
}

TEST(AutocompSearchTest, ContextGoesIntoEverySystemPromptOnlyWhenAsked) {
  WorkloadBrief b = brief();
  b.context = "CONTEXT_BLOCK_MARKER";
  AutocompConfig cfg = config(2, 2, 1, 0.5);
  cfg.with_context = true;
  FakeWorld w;
  w.evaluate = [](const SampleRequest&) { return correct(1.1); };
  AutocompSearch with(b, Budget(10), cfg, menus(), 3);
  auto log = run(with, w);
  for (auto& r : log.issued) EXPECT_TRUE(has(r.system_prompt, "CONTEXT_BLOCK_MARKER"));
  AutocompSearch without(b, Budget(10), config(2, 2, 1, 0.5), menus(), 3);
  for (auto& r : run(without, w).issued) EXPECT_FALSE(has(r.system_prompt, "CONTEXT_BLOCK_MARKER"));
  cfg.with_context = true;
  EXPECT_THROW(AutocompSearch(brief(), Budget(1), cfg, menus(), 3), std::invalid_argument);
}

TEST(AutocompSearchTest, BadConfigIsRejectedNamingTheField) {
  auto expect_error = [](AutocompConfig cfg, StrategyMenus m, const std::string& field) {
    try {
      AutocompSearch(brief(), Budget(1), cfg, m, 1);
      FAIL() << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), field)) << e.what();
    }
  };
  AutocompConfig c = config(0, 1, 1);
  expect_error(c, menus(), "beam_size");
  c = config(1, 1, 1);
  c.menu_keep = 1.5;
  expect_error(c, menus(), "menu_keep");
  expect_error(config(1, 1, 1), StrategyMenus{{}, {"x"}}, "translation menu");
  c = config(1, 1, 1);
  c.policy.translate_fraction = -0.1;
  expect_error(c, menus(), "translate_fraction");
}

TEST(AutocompSearchTest, StatusReportsTheBestCandidateOfEachPhase) {
  FakeWorld w;
  w.evaluate = [](const SampleRequest& r) {
    return correct(r.phase == Phase::translate ? 0.5 : 0.5 + 0.1 * r.generation);
  };
  AutocompSearch s(brief(), Budget(12), config(1, 1, 2, 0.5), menus(), 3);
  run(s, w);
  SearchStatus st = s.status();
  ASSERT_EQ(st.best_by_phase.count(Phase::translate), 1u);
  ASSERT_EQ(st.best_by_phase.count(Phase::optimise), 1u);
  EXPECT_DOUBLE_EQ(st.best_by_phase.at(Phase::translate).speedup, 0.5);
  EXPECT_GT(st.best_by_phase.at(Phase::optimise).speedup, 0.5);
  EXPECT_EQ(st.best->phase, Phase::optimise);
  EXPECT_TRUE(st.done);
}

}  // namespace
}  // namespace palladium
