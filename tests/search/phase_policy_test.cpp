// The budget policies: their phase decisions (pure), and the properties the
// issue asks for, checked over many random configurations and worlds:
//   - no policy ever exceeds its budget (nor fixed_fraction its translate share);
//   - a resumed run (the same observations replayed, in another order) makes
//     the same decisions;
//   - a zero optimise fraction reduces to the translation search.
#include "search/phase_policy.hpp"

#include <gtest/gtest.h>

#include <climits>

#include "search/autocomp_search.hpp"
#include "tests/search/fake_world.hpp"

namespace palladium {
namespace {

using testing::correct;
using testing::FakeWorld;
using testing::run;
using testing::wrong;

PhasePolicy fixed(double f) {
  PhasePolicyConfig c;
  c.translate_fraction = f;
  return PhasePolicy(c);
}

PhasePolicy adaptive(int k, double max_f = 1.0) {
  PhasePolicyConfig c;
  c.kind = PhasePolicyConfig::adaptive;
  c.seeds = k;
  c.max_translate_fraction = max_f;
  return PhasePolicy(c);
}

PhaseView view(int generation, Phase phase, int limit, int translate_spent, int seeds = 0,
               bool complete = false) {
  PhaseView v;
  v.generation = generation;
  v.phase = phase;
  v.limit = limit;
  v.translate_spent = translate_spent;
  v.correct_seeds = seeds;
  v.translation_complete = complete;
  return v;
}

TEST(PhasePolicyTest, FixedFractionTranslatesUntilItsShareIsSpent) {
  auto p = fixed(0.3);
  EXPECT_EQ(p.next_phase(view(0, Phase::translate, 10, 0)), Phase::translate);
  EXPECT_EQ(p.next_phase(view(1, Phase::translate, 10, 2)), Phase::translate);
  EXPECT_EQ(p.next_phase(view(2, Phase::translate, 10, 3)), Phase::optimise);
  EXPECT_EQ(p.allowance(Phase::translate, view(1, Phase::translate, 10, 2)), 1);
  EXPECT_EQ(p.allowance(Phase::optimise, view(1, Phase::translate, 10, 2)), INT_MAX);
}

TEST(PhasePolicyTest, FixedFractionEndsTranslationAtTheScoreExit) {
  EXPECT_EQ(fixed(0.5).next_phase(view(1, Phase::translate, 100, 8, 1, true)), Phase::optimise);
}

TEST(PhasePolicyTest, FixedFractionNeverGoesBackToTranslating) {
  EXPECT_EQ(fixed(0.5).next_phase(view(3, Phase::optimise, 1000, 8)), Phase::optimise);
}

TEST(PhasePolicyTest, ZeroTranslateFractionOptimisesFromTheStart) {
  EXPECT_EQ(fixed(0.0).next_phase(view(0, Phase::translate, 100, 0)), Phase::optimise);
}

TEST(PhasePolicyTest, FullTranslateFractionEndsTheSearchWithTranslation) {
  EXPECT_EQ(fixed(1.0).next_phase(view(2, Phase::translate, 100, 20, 1, true)), std::nullopt);
  EXPECT_EQ(fixed(1.0).next_phase(view(2, Phase::translate, 20, 20)), std::nullopt);
  EXPECT_EQ(fixed(1.0).next_phase(view(2, Phase::translate, 100, 20)), Phase::translate);
}

TEST(PhasePolicyTest, AdaptiveSwitchesOnceKSeedsExistAndIgnoresTheScoreExit) {
  auto p = adaptive(2);
  EXPECT_EQ(p.next_phase(view(0, Phase::translate, 100, 0)), Phase::translate);
  EXPECT_EQ(p.next_phase(view(1, Phase::translate, 100, 8, 1, true)), Phase::translate);
  EXPECT_EQ(p.next_phase(view(2, Phase::translate, 100, 16, 2)), Phase::optimise);
}

TEST(PhasePolicyTest, AdaptiveGoesBackToTranslatingWhenTheBeamHasNoSeed) {
  auto p = adaptive(1);
  EXPECT_EQ(p.next_phase(view(3, Phase::optimise, 100, 10, 1)), Phase::optimise);
  EXPECT_EQ(p.next_phase(view(3, Phase::optimise, 100, 10, 0)), Phase::translate);
}

TEST(PhasePolicyTest, AdaptiveTranslationCapForcesOptimisationUntilTheLimitGrows) {
  auto p = adaptive(1, 0.5);
  EXPECT_EQ(p.next_phase(view(2, Phase::translate, 20, 10)), Phase::optimise);
  EXPECT_EQ(p.next_phase(view(3, Phase::optimise, 20, 10)), Phase::optimise);
  EXPECT_EQ(p.next_phase(view(3, Phase::optimise, 40, 10)), Phase::translate);
}

TEST(PhasePolicyTest, BadFieldsAreNamed) {
  PhasePolicyConfig c;
  c.translate_fraction = 1.5;
  EXPECT_THROW(PhasePolicy{c}, std::invalid_argument);
  c = {};
  c.seeds = 0;
  try {
    PhasePolicy{c};
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("seeds"), std::string::npos);
  }
}

// ---- properties over random configurations --------------------------------

StrategyMenus menus() { return {{"T1", "T2"}, {"O1", "O2", "O3"}}; }

WorkloadBrief brief() { return {"1p", "Flash attention", "def workload(q, k, v): ...\n", ""}; }

struct Case {
  AutocompConfig config;
  Budget budget{0};
  FakeWorld world;
  uint64_t seed = 0;
};

// A random configuration and a random but deterministic world.
Case random_case(uint64_t k) {
  SplitMix64 r(k * 7919 + 1);
  Case c;
  c.seed = r.next();
  auto& cfg = c.config;
  cfg.beam_size = 1 + static_cast<int>(r.next() % 4);
  cfg.plans_per_parent = 1 + static_cast<int>(r.next() % 3);
  cfg.codes_per_plan = 1 + static_cast<int>(r.next() % 3);
  cfg.repair = r.next() % 2;
  cfg.menu_one_shot = r.next() % 2;
  cfg.dedup_level = static_cast<int>(r.next() % 4) - 1;
  cfg.early_stop.window = static_cast<int>(r.next() % 3);
  if (r.next() % 2) {
    cfg.policy.kind = PhasePolicyConfig::fixed_fraction;
    const double fractions[] = {0.0, 0.25, 0.5, 0.8, 1.0};
    cfg.policy.translate_fraction = fractions[r.next() % 5];
  } else {
    cfg.policy.kind = PhasePolicyConfig::adaptive;
    cfg.policy.seeds = 1 + static_cast<int>(r.next() % 3);
    cfg.policy.max_translate_fraction = r.next() % 2 ? 1.0 : 0.5;
  }
  c.budget = Budget(static_cast<int>(r.next() % 60),
                    r.next() % 2 ? BudgetCounts::calls : BudgetCounts::candidates);
  const uint64_t world_seed = r.next();
  const int p_correct = static_cast<int>(r.next() % 100);
  c.world.evaluate = [world_seed, p_correct](const SampleRequest& q) {
    SplitMix64 h(world_seed ^ (static_cast<uint64_t>(q.sample_index) * 0x9e3779b97f4a7c15ULL));
    if (static_cast<int>(h.next() % 100) >= p_correct) {
      return wrong(Verdict::runtime_error, "error " + std::to_string(h.next() % 5));
    }
    return correct(0.3 + static_cast<double>(h.next() % 300) / 100.0);
  };
  c.world.score = [world_seed](const SampleRequest& q) {
    SplitMix64 h(world_seed + static_cast<uint64_t>(*q.parent_sample));
    return "SCORE: " + std::to_string(h.next() % 11);
  };
  return c;
}

// Runs to the end, checking the budget after every step.
testing::RunLog run_checked(AutocompSearch& s, const FakeWorld& w, uint64_t shuffle,
                            int in_flight, const Case& c) {
  testing::RunLog log;
  std::vector<SampleRequest> pending;
  SplitMix64 rng(shuffle);
  const int limit = s.budget().limit();
  const double f = c.config.policy.kind == PhasePolicyConfig::fixed_fraction
                       ? c.config.policy.translate_fraction
                       : c.config.policy.max_translate_fraction;
  const int translate_cap = static_cast<int>(f * limit + 1e-9);
  int charged = 0, translate_charged = 0;
  for (int step = 0; step < 100000; ++step) {
    for (auto& q : s.propose(in_flight - static_cast<int>(pending.size()))) {
      log.issued.push_back(q);
      log.by_index[q.sample_index] = q;
      pending.push_back(q);
      const int cost = s.budget().cost(q.role);
      charged += cost;
      if (q.phase == Phase::translate) translate_charged += cost;
    }
    EXPECT_LE(charged, limit);
    EXPECT_EQ(charged, s.budget().spent());
    EXPECT_LE(translate_charged, translate_cap);
    if (pending.empty()) break;
    size_t pick = shuffle ? rng.next() % pending.size() : 0;
    SampleRequest q = pending[pick];
    pending.erase(pending.begin() + static_cast<long>(pick));
    s.observe(q.sample_index, w.answer(q));
  }
  EXPECT_TRUE(s.done());
  return log;
}

TEST(BudgetPolicyPropertyTest, NoPolicyEverExceedsItsBudget) {
  for (uint64_t k = 0; k < 300; ++k) {
    Case c = random_case(k);
    AutocompSearch s(brief(), c.budget, c.config, menus(), c.seed);
    SCOPED_TRACE("case " + std::to_string(k));
    run_checked(s, c.world, k + 1, 1 + static_cast<int>(k % 7), c);
  }
}

TEST(BudgetPolicyPropertyTest, ResumedRunMakesTheSameDecisions) {
  for (uint64_t k = 0; k < 150; ++k) {
    Case c = random_case(k);
    SCOPED_TRACE("case " + std::to_string(k));
    AutocompSearch first(brief(), c.budget, c.config, menus(), c.seed);
    auto log = run_checked(first, c.world, 0, 1000, c);
    // The "store": every answer the first run got, by sample index.
    std::map<int, Observation> stored;
    for (auto& q : log.issued) stored[q.sample_index] = c.world.answer(q);
    // A resumed run replays stored answers only (a world that never answers
    // anything new), in a different arrival order.
    FakeWorld replay = c.world;
    replay.evaluate = [&stored](const SampleRequest& q) { return *stored.at(q.sample_index).outcome; };
    AutocompSearch resumed(brief(), c.budget, c.config, menus(), c.seed);
    auto again = run_checked(resumed, replay, k + 17, 3, c);
    ASSERT_EQ(again.by_index.size(), log.by_index.size());
    for (auto& [i, q] : log.by_index) {
      EXPECT_EQ(again.by_index.at(i).user_prompt, q.user_prompt) << i;
      EXPECT_EQ(again.by_index.at(i).role, q.role) << i;
      EXPECT_EQ(again.by_index.at(i).phase, q.phase) << i;
    }
    EXPECT_EQ(resumed.beam(), first.beam());
    EXPECT_EQ(resumed.status().stop_reason, first.status().stop_reason);
  }
}

TEST(BudgetPolicyPropertyTest, ZeroOptimiseFractionReducesToTheTranslationSearch) {
  // The translation search on its own: translate forever (adaptive with more
  // seeds than can ever exist, no cap). With optimise fraction 0 the fixed
  // policy must issue exactly that search's samples up to the generation
  // where translation ends, and nothing after.
  for (uint64_t k = 0; k < 150; ++k) {
    Case c = random_case(k);
    SCOPED_TRACE("case " + std::to_string(k));
    c.config.early_stop.window = 0;
    c.config.policy = {};
    c.config.policy.kind = PhasePolicyConfig::fixed_fraction;
    c.config.policy.translate_fraction = 1.0;
    AutocompSearch zero(brief(), c.budget, c.config, menus(), c.seed);
    auto got = run_checked(zero, c.world, 0, 1000, c);

    AutocompConfig forever = c.config;
    forever.policy.kind = PhasePolicyConfig::adaptive;
    forever.policy.seeds = 1 << 30;
    AutocompSearch translation(brief(), c.budget, forever, menus(), c.seed);
    auto want = run(translation, c.world);

    for (auto& q : got.issued) {
      EXPECT_EQ(q.phase, Phase::translate);
      EXPECT_NE(q.role, SampleRole::menu);
      ASSERT_EQ(want.by_index.count(q.sample_index), 1u) << q.sample_index;
      EXPECT_EQ(want.by_index.at(q.sample_index).user_prompt, q.user_prompt);
    }
    // Up to the generation translation ended in, nothing was left out.
    const int last = zero.generations_finished();
    for (auto& q : want.issued) {
      if (q.generation <= last) {
        EXPECT_EQ(got.by_index.count(q.sample_index), 1u);
      }
    }
    if (!zero.translation_complete()) {
      EXPECT_EQ(got.by_index.size(), want.by_index.size());
    }
  }
}

}  // namespace
}  // namespace palladium
