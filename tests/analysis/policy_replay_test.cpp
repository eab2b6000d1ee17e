#include "analysis/policy_replay.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "analysis/metrics.hpp"

namespace palladium {
namespace {

TrajectoryStep ok(double speedup) { return {Verdict::correct, speedup}; }
TrajectoryStep bad() { return {Verdict::numerics_mismatch, std::nullopt}; }

// Three workloads; "a" is solved at once and keeps improving, "b" late, "c" never.
SeedTrajectories recording(int64_t seed = 0) {
  SeedTrajectories t;
  t.seed = seed;
  t.suite = {"a", "b", "c"};
  t.by_workload["a"] = {ok(1.5), ok(2.0), bad(), ok(3.0)};
  t.by_workload["b"] = {bad(), bad(), bad(), ok(1.2)};
  t.by_workload["c"] = {bad(), bad(), bad(), bad()};
  return t;
}

// The recorded run's own numbers, computed the report's way.
SuiteSummary recorded_numbers(const SeedTrajectories& t) {
  std::vector<CandidateResult> rows;
  for (const auto& [w, steps] : t.by_workload)
    for (const auto& s : steps) rows.push_back({w, s.verdict, s.speedup});
  return summarize_suite(summarize_workloads(t.suite, rows));
}

TEST(PolicyReplay, APolicyIdenticalToTheRecordedOneIsEstimatedAtExactlyItsResult) {
  auto t = recording();
  auto real = recorded_numbers(t);
  auto o = replay(parse_replay_policy("prefix:4"), t);
  EXPECT_TRUE(o.exact());
  EXPECT_EQ(o.samples, real.candidates);
  EXPECT_EQ(o.correct, real.correct);
  EXPECT_EQ(o.solved, real.solved);
  EXPECT_EQ(o.per_sample_correctness, real.per_sample_correctness);
  EXPECT_EQ(o.geomean_speedup, real.geomean_speedup);  // bit for bit
  // Over several seeds, the estimate is the mean of the real per-seed results.
  auto e = estimate_policy(parse_replay_policy("prefix:4"), {t, recording(1)});
  EXPECT_TRUE(e.exact);
  EXPECT_EQ(e.geomean_speedup.mean, real.geomean_speedup);
  EXPECT_EQ(e.geomean_speedup.low, real.geomean_speedup);
  EXPECT_EQ(e.solved.mean, real.solved);
}

TEST(PolicyReplay, PrefixTruncatesEveryWorkload) {
  auto o = replay(parse_replay_policy("prefix:2"), recording());
  EXPECT_EQ(o.samples, 6);
  EXPECT_EQ(o.solved, 1);
  EXPECT_DOUBLE_EQ(o.geomean_speedup, std::cbrt(2.0));
  EXPECT_TRUE(o.exact());
}

TEST(PolicyReplay, AskingBeyondTheRecordingIsCensoredNotInvented) {
  auto o = replay(parse_replay_policy("prefix:6"), recording());
  EXPECT_FALSE(o.exact());
  EXPECT_EQ(o.censored, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(o.samples, 12) << "only recorded candidates count";
}

TEST(PolicyReplay, AWorkloadWithNoRecordingIsCensored) {
  auto t = recording();
  t.suite.push_back("d");
  auto o = replay(parse_replay_policy("prefix:1"), t);
  EXPECT_EQ(o.censored, (std::vector<std::string>{"d"}));
  EXPECT_EQ(o.taken["d"], 0);
}

TEST(PolicyReplay, EarlyStopStopsASolvedWorkloadWithoutGains) {
  auto o = replay(parse_replay_policy("early-stop:1"), recording());
  // a: 1.5 (gain), 2.0 (gain), bad (no gain: stop). b, c: never solved, all 4.
  EXPECT_EQ(o.taken["a"], 3);
  EXPECT_EQ(o.taken["b"], 4);
  EXPECT_EQ(o.taken["c"], 4);
  EXPECT_TRUE(o.exact());
  EXPECT_DOUBLE_EQ(o.geomean_speedup, std::cbrt(2.0 * 1.2));
}

TEST(PolicyReplay, ReallocMovesBudgetFromSaturatedToUnsolvedWorkloads) {
  // 2 per workload = 6 in total. a is solved at once; with patience 1 it stops
  // after its first non-gain; the rest goes to b and c.
  auto o = replay(parse_replay_policy("realloc:2,patience=1,give_up=4"), recording());
  EXPECT_EQ(o.samples, 6);
  EXPECT_EQ(o.taken["a"], 1);
  EXPECT_EQ(o.taken["b"] + o.taken["c"], 5);
  EXPECT_TRUE(o.exact());
  // Against prefix:2 (b unsolved there), reallocation finds b's late kernel?
  auto more = replay(parse_replay_policy("realloc:3,patience=1,give_up=4"), recording());
  EXPECT_EQ(more.taken["b"], 4);
  EXPECT_EQ(more.solved, 2);
}

TEST(PolicyReplay, ReallocNeverSpendsMoreThanItsTotal) {
  for (int k = 1; k <= 6; ++k) {
    for (int p = 1; p <= 3; ++p) {
      auto pol = parse_replay_policy("realloc:" + std::to_string(k) + ",patience=" + std::to_string(p));
      auto o = replay(pol, recording());
      EXPECT_LE(o.samples, 3 * k) << pol.text();
      int sum = 0;
      for (auto& [w, n] : o.taken) sum += n;
      EXPECT_EQ(sum, o.samples) << pol.text();
    }
  }
}

TEST(PolicyReplay, SpellingsRoundTripAndBadOnesAreNamed) {
  EXPECT_EQ(parse_replay_policy("realloc:4").text(), "realloc:4,patience=2,give_up=8");
  EXPECT_EQ(parse_replay_policy(parse_replay_policy("early-stop:3").text()).patience, 3);
  for (const char* s : {"prefix", "prefix:0", "prefix:x", "realloc:2,speed=1", "greedy:2", "prefix:2,3"}) {
    try {
      parse_replay_policy(s);
      ADD_FAILURE() << s;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("policy '") + s + "'"), std::string::npos);
    }
  }
  EXPECT_EQ(with_budget(parse_replay_policy("prefix:2"), 5).per_workload, 5);
}

TEST(PolicyReplay, ExactnessDependsOnTheMethod) {
  EXPECT_TRUE(replay_is_exact_for_method("iterative"));
  EXPECT_TRUE(replay_is_exact_for_method("iterative_context"));
  EXPECT_FALSE(replay_is_exact_for_method("autocomp"));
}

}  // namespace
}  // namespace palladium
