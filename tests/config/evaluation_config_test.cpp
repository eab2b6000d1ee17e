// The evaluation section's judge settings (issue 20): evaluation.compile_tier and
// evaluation.full_shapes, their checks, and the stored config text that always spells them.
#include "config/evaluation_config.hpp"

#include <gtest/gtest.h>

#include "config/run_config.hpp"
#include "tests/config/config_error.hpp"

namespace palladium {
namespace {

const char* const kHead = "name: q\nworkloads: [8p]\n";

TEST(EvaluationConfig, JudgeSettingsDefaultToTheCompileTierOnAndTheReducedShapes) {
  auto c = parse_run_config(kHead, "t.yaml");
  EXPECT_EQ(c.evaluation.judge.compile_tier, "on");
  EXPECT_FALSE(c.evaluation.judge.full_shapes);
  auto set = parse_run_config(std::string(kHead) +
                                  "evaluation:\n  compile_tier: off\n  full_shapes: true\n",
                              "t.yaml");
  EXPECT_EQ(set.evaluation.judge.compile_tier, "off");
  EXPECT_TRUE(set.evaluation.judge.full_shapes);
}

TEST(EvaluationConfig, ABadJudgeSettingNamesTheFileAndTheKey) {
  EXPECT_NE(testing::config_error_of(std::string(kHead) + "evaluation: {compile_tier: auto}\n")
                .find("test.yaml: evaluation.compile_tier: must be 'on' or 'off', not 'auto'"),
            std::string::npos);
  EXPECT_NE(testing::config_error_of(std::string(kHead) + "evaluation: {compile_tier: true}\n")
                .find("evaluation.compile_tier: must be 'on' or 'off'"),
            std::string::npos);
  EXPECT_NE(testing::config_error_of(std::string(kHead) + "evaluation: {full_shapes: sometimes}\n")
                .find("test.yaml: evaluation.full_shapes: has the wrong type"),
            std::string::npos);
  EXPECT_NE(testing::config_error_of(std::string(kHead) + "evaluation: {full_shape: true}\n")
                .find("evaluation.full_shape: unknown key"),
            std::string::npos);
}

// The stored text (what the run store keeps and hashes) says how the run was judged, with the
// defaults the config left out; the experimenter's lines and comments stay.
TEST(EvaluationConfig, TheStoredTextSpellsTheJudgeSettings) {
  auto absent = parse_run_config(std::string(kHead) + "# a comment\n", "t.yaml");
  EXPECT_EQ(absent.text, std::string(kHead) + "# a comment\nevaluation:\n" +
                             "  compile_tier: on\n  full_shapes: false\n");

  auto block = parse_run_config(std::string(kHead) +
                                    "evaluation:\n    # why 90 s\n    timeout_s: 90\n"
                                    "    full_shapes: true\nagents: {local: 1}\n",
                                "t.yaml");
  EXPECT_EQ(block.text, std::string(kHead) +
                            "evaluation:\n    # why 90 s\n    compile_tier: on\n    timeout_s: 90\n"
                            "    full_shapes: true\nagents: {local: 1}\n");

  auto flow = parse_run_config(std::string(kHead) + "evaluation: {timeout_s: 90}\n", "t.yaml");
  auto again = parse_run_config(flow.text, "again.yaml");
  EXPECT_EQ(again.evaluation.judge.compile_tier, "on");
  EXPECT_EQ(again.evaluation.timeout_s, 90);
  EXPECT_NE(flow.text.find("compile_tier: on"), std::string::npos) << flow.text;
  EXPECT_NE(flow.text.find("full_shapes: false"), std::string::npos) << flow.text;
  EXPECT_EQ(again.text, flow.text) << "filling in is idempotent: a resumed run has the same hash";

  std::string spelled =
      std::string(kHead) + "evaluation:\n  compile_tier: off\n  full_shapes: on\n";
  EXPECT_EQ(parse_run_config(spelled, "t.yaml").text, spelled) << "nothing to fill in";
}

}  // namespace
}  // namespace palladium
