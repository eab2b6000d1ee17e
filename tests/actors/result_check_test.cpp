// The result checks' decisions, without actors: what is looked at again, who is quarantined
// on a disagreement (with and without a tie-breaker), and what the plausibility gate keeps.
#include "actors/result_check.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace palladium {
namespace {

Evaluated result(const std::string& agent, const std::string& verdict,
                 std::optional<double> kernel_ms = std::nullopt, double baseline_ms = 1.0,
                 TimingKind timing = TimingKind::cpu_wall) {
  Evaluated r;
  r.agent.agent_id = agent;
  r.agent.agent_key = "key-" + agent;
  r.evaluation.verdict = *verdict_from_string(verdict);
  if (verdict == "correct" && kernel_ms) {
    r.evaluation.kernel_ms = kernel_ms;
    r.evaluation.baseline_ms = baseline_ms;
    r.evaluation.timing_kind = timing;
  }
  return r;
}

ResultCheckOptions opts(double share = 0.0) {
  ResultCheckOptions o;
  o.share = share;
  o.seed = 42;
  return o;
}

TEST(ResultChecks, TheRandomShareIsOfAllResultsAndFollowsTheSeed) {
  ResultChecks a(opts(0.25)), b(opts(0.25));
  int sampled = 0;
  for (int i = 0; i < 4000; ++i) {
    auto la = a.first_look(result("A", i % 2 ? "correct" : "numerics_mismatch"), "8p", 7);
    auto lb = b.first_look(result("A", "correct"), "8p", 7);
    EXPECT_EQ(la.sampled, lb.sampled) << "the draws do not depend on the verdict";
    sampled += la.sampled;
  }
  EXPECT_NEAR(sampled / 4000.0, 0.25, 0.03);
  ResultChecks none(opts(0.0));
  EXPECT_FALSE(none.first_look(result("A", "correct", 0.5), "8p", 7).again());
}

TEST(ResultChecks, ASuspectTimingIsLookedAtAgainOnAnyBackendAndTheRooflineOnlyOnTpu) {
  ResultCheckOptions o = opts();
  o.costs["8p"] = WorkloadCost{918e12, 1.0};  // a 1 s floor on v6e
  ResultChecks c(o);
  auto fast = c.first_look(result("A", "correct", 0.05, 1.0), "8p", 7);  // 20x
  EXPECT_TRUE(fast.timing.suspect);
  EXPECT_NE(fast.timing.reason.find("ceiling"), std::string::npos);
  // 2x, but 100 ms for a workload whose floor is 1 s: impossible on a TPU, ignored on a CPU.
  EXPECT_TRUE(c.first_look(result("A", "correct", 100, 200, TimingKind::tpu_profiler), "8p", 7).timing.suspect);
  EXPECT_FALSE(c.first_look(result("A", "correct", 100, 200, TimingKind::cpu_wall), "8p", 7).timing.suspect);
  EXPECT_FALSE(c.first_look(result("A", "numerics_mismatch"), "8p", 7).again());
  EXPECT_EQ(c.plausibility_of(result("A", "correct", 0.5), "8p"), "plausible");
  EXPECT_EQ(c.plausibility_of(result("A", "numerics_mismatch"), "8p"), "");
}

TEST(ResultChecks, HostDependentVerdictsProveNothing) {
  EXPECT_EQ(compare_results(result("A", "correct"), result("B", "timeout")),
            Agreement::inconclusive);
  EXPECT_EQ(compare_results(result("A", "correct"), result("B", "numerics_mismatch")),
            Agreement::disagree);
  EXPECT_EQ(compare_results(result("A", "lowering_error"), result("B", "numerics_mismatch")),
            Agreement::agree);
}

// The forger's lie (a `correct` for a kernel that is wrong), checked by one honest agent and
// no third: the key that claimed `correct` is quarantined and the failure is the answer.
TEST(ResultChecks, WithoutATieBreakerTheCorrectClaimIsTheOneQuarantined) {
  ResultChecks c(opts(1.0));
  FirstLook look = c.first_look(result("F", "correct", 0.5), "8p", 7);
  ASSERT_TRUE(look.sampled);
  std::vector<Opinion> ops{{"pF", result("F", "correct", 0.5)},
                           {"pH", result("H", "numerics_mismatch")}};
  auto d = c.decide(look, ops, /*third_available=*/false);
  EXPECT_FALSE(d.need_tiebreak);
  ASSERT_EQ(d.quarantine.size(), 1u);
  EXPECT_EQ(d.quarantine[0].first, "pF");
  EXPECT_EQ(d.quarantine[0].second, "claimed correct for job 7 where agent H found numerics_mismatch");
  EXPECT_EQ(d.answer.evaluation.verdict, Verdict::numerics_mismatch);
  EXPECT_EQ(d.answer.agent.agent_key, "key-H") << "the stored row names the key whose result it is";
  auto cross = nlohmann::json::parse(d.answer.checks.cross_check_json);
  EXPECT_EQ(cross["agreement"], "disagree, no third agent");
  EXPECT_EQ(cross["quarantined"]["agent_key"], "key-F");
  EXPECT_EQ(cross["opinions"].size(), 2u);
  // The same pair the other way round (the forger checking an honest failure).
  std::vector<Opinion> rev{{"pH", result("H", "numerics_mismatch")},
                           {"pF", result("F", "correct", 0.5)}};
  auto r = c.decide(look, rev, false);
  ASSERT_EQ(r.quarantine.size(), 1u);
  EXPECT_EQ(r.quarantine[0].first, "pF");
  EXPECT_EQ(r.answer.evaluation.verdict, Verdict::numerics_mismatch);
}

// With a third agent the majority decides, so a saboteur (false failures) is the one caught.
TEST(ResultChecks, ATieBreakerOutvotesTheLiarWhicheverWayItLies) {
  ResultChecks c(opts(1.0));
  FirstLook look = c.first_look(result("H", "correct", 0.5), "8p", 7);
  std::vector<Opinion> ops{{"pH", result("H", "correct", 0.5)},
                           {"pS", result("S", "numerics_mismatch")}};
  EXPECT_TRUE(c.decide(look, ops, true).need_tiebreak);
  ops.push_back({"pT", result("T", "correct", 0.6)});
  auto d = c.decide(look, ops, false);
  ASSERT_EQ(d.quarantine.size(), 1u);
  EXPECT_EQ(d.quarantine[0].first, "pS");
  EXPECT_EQ(d.answer.evaluation.verdict, Verdict::correct);
  EXPECT_EQ(d.answer.agent.agent_key, "key-H");
  EXPECT_EQ(d.answer.evaluation.kernel_ms, 0.5) << "a timing that was not suspect is not replaced";
  EXPECT_EQ(d.answer.checks.plausibility, "plausible");
}

TEST(ResultChecks, AnAgreeingOrInconclusiveSecondOpinionLeavesTheFirstAndQuarantinesNobody) {
  ResultChecks c(opts(1.0));
  FirstLook look = c.first_look(result("A", "numerics_mismatch"), "8p", 7);
  auto agree = c.decide(look, {{"pA", result("A", "numerics_mismatch")},
                               {"pB", result("B", "shape_mismatch")}},
                        true);
  EXPECT_TRUE(agree.quarantine.empty());
  EXPECT_EQ(agree.answer.agent.agent_id, "A");
  EXPECT_EQ(nlohmann::json::parse(agree.answer.checks.cross_check_json)["agreement"], "agree");
  auto unsure = c.decide(look, {{"pA", result("A", "numerics_mismatch")},
                                {"pB", result("B", "timeout")}},
                         true);
  EXPECT_TRUE(unsure.quarantine.empty());
  EXPECT_FALSE(unsure.need_tiebreak);
  EXPECT_EQ(unsure.answer.agent.agent_id, "A");
}

// Issue 23 item 3: a suspect timing is re-timed; if it holds it is kept and flagged, else the
// second timing replaces it; both are stored.
TEST(ResultChecks, TheGateKeepsAHeldSpeedFlaggedAndReplacesOneThatDidNotHold) {
  ResultChecks c(opts());
  FirstLook look = c.first_look(result("A", "correct", 0.05), "8p", 7);  // 20x
  ASSERT_TRUE(look.timing.suspect);
  ASSERT_FALSE(look.sampled);
  auto held = c.decide(look, {{"pA", result("A", "correct", 0.05)},
                              {"pB", result("B", "correct", 0.06)}},
                       true);
  EXPECT_EQ(held.answer.checks.plausibility, "implausible_speed");
  EXPECT_EQ(held.answer.evaluation.kernel_ms, 0.05);
  auto both = nlohmann::json::parse(held.answer.checks.retiming_json);
  EXPECT_EQ(both["first"]["kernel_ms"], 0.05);
  EXPECT_EQ(both["second"]["kernel_ms"], 0.06);
  EXPECT_EQ(both["second"]["agent_key"], "key-B");
  EXPECT_NE(both["reason"].get<std::string>().find("ceiling"), std::string::npos);

  Evaluated again = result("A", "correct", 0.5);  // same agent, 2x
  again.evaluation.timing_runs = 5;
  again.evaluation.kernel_ms_low = 0.45;
  again.evaluation.kernel_ms_high = 0.55;
  auto replaced = c.decide(look, {{"pA", result("A", "correct", 0.05)}, {"pA", again}}, false);
  EXPECT_EQ(replaced.answer.checks.plausibility, "retimed");
  EXPECT_EQ(replaced.answer.evaluation.kernel_ms, 0.5);
  // The re-timing's spread comes with its median, never the first timing's.
  EXPECT_EQ(replaced.answer.evaluation.timing_runs, 5);
  EXPECT_EQ(replaced.answer.evaluation.kernel_ms_low, 0.45);
  EXPECT_EQ(replaced.answer.evaluation.kernel_ms_high, 0.55);
  EXPECT_EQ(nlohmann::json::parse(replaced.answer.checks.retiming_json)["first"]["kernel_ms"], 0.05);
  EXPECT_EQ(nlohmann::json::parse(replaced.answer.checks.cross_check_json)["agreement"],
            "same agent (re-timing only)");

  auto alone = c.decide(look, {{"pA", result("A", "correct", 0.05)}}, false);
  EXPECT_EQ(alone.answer.checks.plausibility, "implausible_speed") << "not re-timed: kept and flagged";
  EXPECT_TRUE(nlohmann::json::parse(alone.answer.checks.retiming_json)["second"].is_null());
}

}  // namespace
}  // namespace palladium
