#include "config/sweep_config.hpp"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace palladium {
namespace {

const std::string kConfigs = std::string(PALLADIUM_SOURCE_DIR) + "/configs";

std::string sweep(const std::string& grid, const std::string& extra = "") {
  return "name: s\nrun:\n  name: base\n  workloads: [8p, 12p]\n  budget_per_workload: 4\n" +
         extra + "grid:\n" + grid;
}

std::string error_of(const std::string& text) {
  try {
    parse_sweep_config(text, "s.yaml", kConfigs);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepConfig, TheGridIsAProductLastAxisFastestWithStableKeys) {
  auto s = parse_sweep_config(sweep("  budget_per_workload: [2, 6]\n  seed: [0, 1, 2]\n"), "s.yaml",
                              kConfigs);
  ASSERT_EQ(s.cells.size(), 6u);
  EXPECT_EQ(s.cells[0].key, "budget_per_workload=2,seed=0");
  EXPECT_EQ(s.cells[1].key, "budget_per_workload=2,seed=1");
  EXPECT_EQ(s.cells[3].key, "budget_per_workload=6,seed=0");
  EXPECT_EQ(s.cells[4].config.search.budget_per_workload, 6);
  EXPECT_EQ(s.cells[4].config.seeds, (std::vector<uint64_t>{1}));
  EXPECT_EQ(s.cells[4].params_json, R"({"budget_per_workload":"6","seed":"1"})");
  EXPECT_EQ(s.cells[4].cost, 6 * 2 * 1);
  EXPECT_EQ(s.cells[4].config.name, "s[budget_per_workload=6,seed=1]");
  // The same sweep expands to the same cells and cell texts (resume finds them).
  auto again = parse_sweep_config(sweep("  budget_per_workload: [2, 6]\n  seed: [0, 1, 2]\n"),
                                  "s.yaml", kConfigs);
  for (size_t i = 0; i < s.cells.size(); ++i) {
    EXPECT_EQ(again.cells[i].key, s.cells[i].key);
    EXPECT_EQ(again.cells[i].config.text, s.cells[i].config.text);
  }
}

TEST(SweepConfig, DottedPathsAndNamedPointsSetAnyKey) {
  auto s = parse_sweep_config(
      sweep("  evaluation.timeout_s: [10, 20]\n  workloads: {quick: [8p], pair: [8p, 41k]}\n"),
      "s.yaml", kConfigs);
  ASSERT_EQ(s.cells.size(), 4u);
  EXPECT_EQ(s.cells[1].key, "evaluation.timeout_s=10,workloads=pair");
  EXPECT_EQ(s.cells[1].config.workloads, (std::vector<std::string>{"8p", "41k"}));
  EXPECT_DOUBLE_EQ(s.cells[3].config.evaluation.timeout_s, 20);
}

TEST(SweepConfig, IdentityIgnoresCommentsAndScheduling) {
  auto a = parse_sweep_config(sweep("  seed: [0, 1]\n"), "s.yaml", kConfigs);
  auto b = parse_sweep_config("# a comment\n" + sweep("  seed: [0, 1]  # seeds\n") +
                                  "concurrency: 3\norder: cheap_first\n",
                              "s.yaml", kConfigs);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(b.concurrency, 3);
  auto c = parse_sweep_config(sweep("  seed: [0, 2]\n"), "s.yaml", kConfigs);
  EXPECT_NE(a.text, c.text);
}

TEST(SweepConfig, ABaseFileIsReadRelativeToTheSweep) {
  auto s = parse_sweep_config("name: s\nbase: quickstart.yaml\ngrid: {seed: [0, 1]}\n", "s.yaml",
                              kConfigs);
  ASSERT_EQ(s.cells.size(), 2u);
  EXPECT_EQ(s.cells[0].config.workloads.size(), 5u);
  EXPECT_EQ(s.base.agents.local, 2);
}

TEST(SweepConfig, ANoGridSweepIsOneCell) {
  auto s = parse_sweep_config("name: s\nrun: {name: b, workloads: [8p]}\n", "s.yaml", kConfigs);
  ASSERT_EQ(s.cells.size(), 1u);
  EXPECT_EQ(s.cells[0].key, "all");
}

TEST(SweepConfig, BadGridsAreNamed) {
  EXPECT_NE(error_of(sweep("  method: [iterative, nope]\n")).find("cell method=nope: method: 'nope'"),
            std::string::npos)
      << error_of(sweep("  method: [iterative, nope]\n"));
  EXPECT_NE(error_of(sweep("  agents.local: [1, 2]\n")).find("grid.agents.local: cannot vary"),
            std::string::npos);
  EXPECT_NE(error_of(sweep("  evaluation.backend: [interpret, tpu]\n")).find("cannot vary"),
            std::string::npos);
  EXPECT_NE(error_of(sweep("  workloads: [[8p], [12p]]\n")).find("needs a name"), std::string::npos);
  EXPECT_NE(error_of(sweep("  seed: [1, 1]\n")).find("'1' is listed twice"), std::string::npos);
  EXPECT_NE(error_of(sweep("  seed: []\n")).find("has no values"), std::string::npos);
  EXPECT_NE(error_of(sweep("  llm.bogus: [1]\n")).find("llm.bogus: unknown key"), std::string::npos);
  EXPECT_NE(error_of(sweep("  seed: [0]\n", "") + "order: fastest\n").find("order: must be"),
            std::string::npos);
  EXPECT_NE(error_of("name: s\ngrid: {seed: [0]}\n").find("base: is required"), std::string::npos);
  EXPECT_NE(error_of("name: s\nbase: nope.yaml\n").find("cannot read the base run config"),
            std::string::npos);
  EXPECT_NE(error_of(sweep("  seed: [0]\n  seed: [1]\n")).find("grid.seed: is given twice"),
            std::string::npos);
}

TEST(SweepConfig, CheapFirstShowsEveryLevelEarlyAtTheLowestCost) {
  auto s = parse_sweep_config(
      sweep("  budget_per_workload: [8, 2]\n  seed: [0, 1]\n  evaluation.timeout_s: [10, 20]\n") +
          "order: cheap_first\n",
      "s.yaml", kConfigs);
  ASSERT_EQ(s.cells.size(), 8u);
  // The first cell is cheap; the first two together show every level of every axis.
  EXPECT_EQ(s.cells[0].config.search.budget_per_workload, 2);
  std::set<std::string> levels;
  for (int i = 0; i < 2; ++i)
    for (const auto& [axis, label] : s.cells[i].params) levels.insert(axis + "=" + label);
  EXPECT_EQ(levels.size(), 6u);
  // Afterwards, cheaper cells before dearer ones.
  for (size_t i = 3; i < s.cells.size(); ++i) EXPECT_LE(s.cells[i - 1].cost, s.cells[i].cost);
  std::set<std::string> keys;
  for (const auto& c : s.cells) keys.insert(c.key);
  EXPECT_EQ(keys.size(), 8u) << "a permutation";
}

TEST(SweepConfig, ACellKeepsItsKeyOrdinalAndConfigWhateverTheRunOrder) {
  // A resumed sweep finds its cells by key; changing `order` (not part of the
  // identity) must not move a config to another key or ordinal.
  const std::string grid = "  budget_per_workload: [8, 2]\n  seed: [0, 1]\n";
  auto by_grid = parse_sweep_config(sweep(grid), "s.yaml", kConfigs);
  auto cheap = parse_sweep_config(sweep(grid) + "order: cheap_first\n", "s.yaml", kConfigs);
  ASSERT_EQ(by_grid.text, cheap.text);
  ASSERT_EQ(by_grid.cells.size(), cheap.cells.size());
  EXPECT_NE(by_grid.cells[0].key, cheap.cells[0].key) << "cheap_first did reorder";
  for (const auto& c : cheap.cells) {
    auto same = std::find_if(by_grid.cells.begin(), by_grid.cells.end(),
                             [&](const SweepCell& g) { return g.key == c.key; });
    ASSERT_NE(same, by_grid.cells.end()) << c.key;
    EXPECT_EQ(same->ordinal, c.ordinal) << c.key;
    EXPECT_EQ(same->config.text, c.config.text) << c.key;
    EXPECT_EQ(same->params_json, c.params_json) << c.key;
  }
}

TEST(SweepConfig, TheShippedOfflineSweepIsTwoMethodsByTwoBudgetsByTwoSeedsOnTheSyntheticModel) {
  auto s = load_sweep_config(kConfigs + "/sweeps/offline.yaml");
  ASSERT_EQ(s.cells.size(), 8u);
  std::set<std::string> methods, seeds;
  std::set<int> budgets;
  for (const auto& c : s.cells) {
    methods.insert(c.config.search.method);
    budgets.insert(c.config.search.budget_per_workload);
    ASSERT_EQ(c.config.seeds.size(), 1u);
    seeds.insert(std::to_string(c.config.seeds[0]));
    EXPECT_EQ(c.config.llm.provider, "synthetic") << c.key << ": offline, no key";
    EXPECT_EQ(c.config.evaluation.backend, "interpret") << c.key;
  }
  EXPECT_EQ(methods, (std::set<std::string>{"iterative", "iterative_context"}));
  EXPECT_EQ(budgets.size(), 2u);
  EXPECT_EQ(seeds.size(), 2u);
}

}  // namespace
}  // namespace palladium
