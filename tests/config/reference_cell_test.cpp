#include "config/reference_cell.hpp"

#include <gtest/gtest.h>

#include "config/run_config.hpp"

namespace palladium {
namespace {

const std::string kConfigs = std::string(PALLADIUM_SOURCE_DIR) + "/configs";

SweepConfig sweep(const std::string& workloads) {
  return parse_sweep_config("name: s\nrun:\n  name: base\n  workloads: " + workloads +
                                "\n  evaluation:\n    timeout_s: 33\ngrid:\n  seed: [0, 1]\n",
                            "s.yaml", kConfigs);
}

TEST(ReferenceCell, TimesTheHandTunedReferencesOfTheSweepsPriorityWorkloadsOnce) {
  // 8p has a hand-tuned reference in workloads/catalog.json, 12p none.
  const std::string text = reference_cell_config(sweep("[12p, 8p]"));
  ASSERT_FALSE(text.empty());
  RunConfig ref = parse_run_config(text, "reference");
  EXPECT_EQ(ref.name, std::string("s[") + kReferenceCellKey + "]");
  EXPECT_EQ(ref.workloads, std::vector<std::string>{"8p"});
  EXPECT_EQ(ref.llm.provider, "hand_tuned");
  EXPECT_EQ(ref.search.budget_per_workload, 1);
  EXPECT_EQ(ref.seeds, std::vector<uint64_t>{0});
  EXPECT_EQ(ref.evaluation.timeout_s, 33) << "the base's evaluation section is kept";
}

TEST(ReferenceCell, NoneWithoutAPriorityWorkload) {
  EXPECT_EQ(reference_cell_config(sweep("[12p]")), "");
}

}  // namespace
}  // namespace palladium
