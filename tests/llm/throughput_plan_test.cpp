#include "llm/throughput_plan.hpp"

#include <gtest/gtest.h>

#include <cmath>

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
  // 576M tokens at 1M/min = 9.6 h; $1,248 at $10 per 10 min, each call's cost held from its
  // start until one window after its answer (600 + 40 s), the first window at once: 22 h.
  EXPECT_EQ(e.binding, "spend rate");
  EXPECT_NEAR(e.wall_s, 1248.0 * (600 + 40) / 10 - 600 + 50 + a.startup_s, 1e-6);
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
  EXPECT_NEAR(many.wall_s, 64 * 50.0 + a.startup_s, 1e-9);
}

TEST(ThroughputPlanTest, TheSpendGovernorsWorstCaseReservationSlowsTheRate) {
  PlanLimits l;
  l.max_concurrent = 1000000;
  l.usd_per_window = 10;
  l.window_s = 600;
  l.chips = 1000000;
  PlanAssumptions a;
  PlanDemand d = study();
  const double expected = estimate_plan(d, l, a, flash()).wall_s;
  // A 16k output limit: each running call holds ~$0.05 instead of its ~$0.026.
  d.reserved_output_per_call = 16384;
  const PlanEstimate e = estimate_plan(d, l, a, flash());
  EXPECT_EQ(e.binding, "spend rate");
  const double c = 1248.0 / 48000, w = (4000 * 0.5 + 16384 * 3.0) / 1e6;
  EXPECT_NEAR(e.wall_s, 48000 * (c * 600 + w * 40) / (10 - w + c) - 600 + 50 + a.startup_s, 1e-6);
  EXPECT_GT(e.wall_s, expected);
  // A limit below one call's worst case never lets a call start.
  l.usd_per_window = 0.04;
  const PlanEstimate never = estimate_plan(d, l, a, flash());
  EXPECT_EQ(never.binding, "spend rate");
  EXPECT_TRUE(std::isinf(never.wall_s));
}

TEST(ThroughputPlanTest, RequestsPerMinuteIsTheGatewaysBucketPlusTheLastStep) {
  PlanDemand d;
  d.calls = d.candidates = 16;
  PlanLimits l;
  l.requests_per_minute = 12;  // a burst of 1, then 11 a minute
  PlanAssumptions a;
  a.latency_s = 2;
  a.eval_s = 1;
  a.startup_s = 0;
  const PlanEstimate e = estimate_plan(d, l, a, std::nullopt);
  EXPECT_EQ(e.binding, "requests/min");
  EXPECT_NEAR(e.wall_s, 15 / (11.0 / 60) + 3, 1e-9);
  l.chips = 16;
  l.requests_per_minute = 600;  // now 16 x 2 s / 8 in flight + 1 s binds
  const PlanEstimate relaxed = estimate_plan(d, l, a, std::nullopt);
  EXPECT_EQ(relaxed.binding, "concurrency");
  EXPECT_NEAR(relaxed.wall_s, 16 * 2 / 8.0 + 1, 1e-9);
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
