#include "llm/throughput_plan.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

Price flash() {
  Price p;
  p.input_per_mtok = 0.5;
  p.output_per_mtok = 3.0;
  p.batch_input_per_mtok = 0.25;
  p.batch_output_per_mtok = 1.5;
  p.cached_input_per_mtok = 0.05;
  return p;
}

// The study: 48,000 candidates at ~4k in / 8k out, one call each.
PlanDemand study() {
  PlanDemand d;
  d.calls = d.samples = d.candidates = 48000;
  d.input_tokens = 48000 * 4000.0;
  d.output_tokens = 48000 * 8000.0;
  d.longest_chain = 64;
  return d;
}

TEST(ThroughputPlanTest, Tier1IsBoundByTheSpendRate) {
  PlanLimits l;
  l.max_concurrent = 64;
  l.requests_per_minute = 1000;
  l.tokens_per_minute = 1e6;
  l.usd_per_window = 10;
  l.window_s = 600;
  l.chips = 8;
  PlanAssumptions a;
  a.latency_s = 40;
  a.eval_s = 10;
  const PlanEstimate e = estimate_plan(study(), l, a, flash());
  // $96 in + $1,152 out = $1,248 online, half in batch.
  EXPECT_NEAR(e.usd_online, 1248.0, 1e-6);
  EXPECT_NEAR(e.usd_batch, 624.0, 1e-6);
  // 576M tokens at 1M/min = 9.6 h; $1,248 at $10 per 10 min = 20.8 h.
  EXPECT_EQ(e.binding, "spend rate");
  EXPECT_NEAR(e.wall_s, 1248.0 / 10 * 600, 1e-6);
  EXPECT_EQ(e.limits[1].limit, "TPU chips");  // 48,000 x 10 s / 8 = 16.7 h
  EXPECT_NE(e.limits.front().relax.find("llm.mode: batch"), std::string::npos);
}

TEST(ThroughputPlanTest, WithoutAccountLimitsTheChipsBindThenTheChain) {
  PlanLimits l;
  l.max_concurrent = 10000;
  l.chips = 8;
  PlanAssumptions a;
  const PlanEstimate few = estimate_plan(study(), l, a, flash());
  EXPECT_EQ(few.binding, "TPU chips");
  l.chips = 100000;
  const PlanEstimate many = estimate_plan(study(), l, a, flash());
  EXPECT_EQ(many.binding, "sequential chain");
  EXPECT_NEAR(many.wall_s, 64 * 50.0, 1e-9);
}

TEST(ThroughputPlanTest, CachedTokensCostTheCachedRate) {
  PlanDemand d;
  d.calls = 1;
  d.input_tokens = 1e6;
  PlanAssumptions a;
  a.cached_share = 0.8;
  const PlanEstimate e = estimate_plan(d, PlanLimits{}, a, flash());
  EXPECT_DOUBLE_EQ(e.cached_tokens, 8e5);
  EXPECT_NEAR(e.usd_online, 0.1 + 0.04, 1e-12);
}

}  // namespace
}  // namespace palladium
