#include "config/search_config.hpp"

#include <gtest/gtest.h>

#include <string>

namespace palladium {
namespace {

SearchConfig parse(const std::string& yaml) {
  ConfigReader r("test.yaml");
  return parse_search_config(r, r.load(yaml));
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SearchConfigTest, DefaultsAreTheIterativeMethodCountingCandidates) {
  auto c = parse("method: iterative\n");
  EXPECT_EQ(c.method_config.method, "iterative");
  EXPECT_EQ(c.method_config.counts, BudgetCounts::candidates);
  EXPECT_FALSE(c.global_enabled);
  EXPECT_EQ(c.in_flight_per_slot, 2);
}

TEST(SearchConfigTest, ReadsEveryAutocompAndBudgetKey) {
  auto c = parse(R"(
method: autocomp
budget_per_workload: 64
budget:
  counts: calls
  phase_policy: adaptive
  translate_fraction: 0.25
  seeds: 2
  max_translate_fraction: 0.75
  early_stop: {window: 3, threshold: 0.99}
  global: {enabled: true, initial_fraction: 0.4, hopeless_after: 10, saturation_window: 6, chunk: 4}
autocomp:
  beam: 3
  plans: 5
  codes: 1
  menu_keep: 0.5
  menu_one_shot: false
  menu_new_strategies: 7
  translate_score: false
  translate_exit_score: 8.5
  translate_drop_root: false
  translate_perf_threshold: 12
  keep_factor_early: 1.2
  keep_factor_early_generations: 3
  keep_factor: 0.95
  dedup_level: 2
  repair: true
  context: true
  translate_menu: t2
  optimise_menu: o2
pipeline: {in_flight_per_slot: 4}
)");
  const auto& m = c.method_config;
  EXPECT_EQ(m.counts, BudgetCounts::calls);
  EXPECT_EQ(m.autocomp.policy.kind, PhasePolicyConfig::adaptive);
  EXPECT_DOUBLE_EQ(m.autocomp.policy.translate_fraction, 0.25);
  EXPECT_EQ(m.autocomp.policy.seeds, 2);
  EXPECT_DOUBLE_EQ(m.autocomp.policy.max_translate_fraction, 0.75);
  EXPECT_EQ(m.early_stop.window, 3);
  EXPECT_DOUBLE_EQ(m.early_stop.threshold, 0.99);
  EXPECT_TRUE(c.global_enabled);
  EXPECT_DOUBLE_EQ(c.global.initial_fraction, 0.4);
  EXPECT_EQ(c.global.hopeless_after, 10);
  EXPECT_EQ(c.global.saturation_window, 6);
  EXPECT_EQ(c.global.chunk, 4);
  const auto& a = m.autocomp;
  EXPECT_EQ(a.beam_size, 3);
  EXPECT_EQ(a.plans_per_parent, 5);
  EXPECT_EQ(a.codes_per_plan, 1);
  EXPECT_DOUBLE_EQ(a.menu_keep, 0.5);
  EXPECT_FALSE(a.menu_one_shot);
  EXPECT_EQ(a.menu_new_strategies, 7);
  EXPECT_FALSE(a.translate_score);
  EXPECT_DOUBLE_EQ(a.translate_exit_score, 8.5);
  EXPECT_FALSE(a.translate_drop_root);
  EXPECT_DOUBLE_EQ(a.translate_perf_threshold, 12);
  EXPECT_DOUBLE_EQ(a.early_keep_factor, 1.2);
  EXPECT_EQ(a.early_keep_generations, 3);
  EXPECT_DOUBLE_EQ(a.keep_factor, 0.95);
  EXPECT_EQ(a.dedup_level, 2);
  EXPECT_TRUE(a.repair);
  EXPECT_TRUE(a.with_context);
  EXPECT_TRUE(method_uses_context(m));
  EXPECT_EQ(c.translate_menu, "t2");
  EXPECT_EQ(c.optimise_menu, "o2");
  EXPECT_EQ(c.in_flight_per_slot, 4);
}

TEST(SearchConfigTest, ErrorsNameTheKey) {
  EXPECT_NE(error_of("method: beam\n").find("method: 'beam' is not a method"), std::string::npos);
  EXPECT_NE(error_of("budget: {counts: tokens}\n").find("budget.counts"), std::string::npos);
  EXPECT_NE(error_of("budget: {translate_fraction: 1.5}\n").find("budget.translate_fraction"),
            std::string::npos);
  EXPECT_NE(error_of("budget: {phase_policy: greedy}\n").find("budget.phase_policy"),
            std::string::npos);
  EXPECT_NE(error_of("budget: {early_stop: {windows: 2}}\n").find("budget.early_stop.windows"),
            std::string::npos);
  EXPECT_NE(error_of("method: autocomp\nautocomp: {beam: 0}\n").find("autocomp.beam"),
            std::string::npos);
  EXPECT_NE(error_of("method: autocomp\nautocomp: {menu_keep: .nan}\n").find("autocomp.menu_keep"),
            std::string::npos);
  EXPECT_NE(error_of("method: autocomp\nautocomp: {optimise_menu: ../x}\n")
                .find("autocomp.optimise_menu"),
            std::string::npos);
  EXPECT_NE(error_of("method: iterative\nautocomp: {beam: 2}\n").find("method is 'iterative'"),
            std::string::npos);
  EXPECT_NE(error_of("pipeline: {in_flight_per_slot: 0}\n").find("pipeline.in_flight_per_slot"),
            std::string::npos);
}

TEST(SearchConfigTest, IterativeContextUsesContext) {
  EXPECT_TRUE(method_uses_context(parse("method: iterative_context\n").method_config));
  EXPECT_FALSE(method_uses_context(parse("method: autocomp\n").method_config));
}

}  // namespace
}  // namespace palladium
