#include "search/response_parsing.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(ParseStrategyListTest, DashStarAndNumberedItemsInOrder) {
  auto items = parse_strategy_list(
      "# a comment\n- tile the K axis\n  * fuse the bias\n3. use bf16 inputs\n4) unroll\n"
      "not an item\n-no space\n- \n");
  EXPECT_EQ(items, (std::vector<std::string>{"tile the K axis", "fuse the bias",
                                             "use bf16 inputs", "unroll"}));
}

TEST(ParseStrategyListTest, OnlyInsideStrategiesTagsWhenPresent) {
  auto items = parse_strategy_list(
      "Here are ideas:\n- outside\n<strategies>\n- inside one\n- inside two\n</strategies>\n- after\n");
  EXPECT_EQ(items, (std::vector<std::string>{"inside one", "inside two"}));
  // An unclosed section runs to the end.
  EXPECT_EQ(parse_strategy_list("<STRATEGIES>\n- a\n- b"), (std::vector<std::string>{"a", "b"}));
}

TEST(ExtractPlanTest, DropsThinkingBeforeTheLastMarker) {
  EXPECT_EQ(extract_plan("<think>hmm</think>\n  Tile M by 256.  \n"), "Tile M by 256.");
  EXPECT_EQ(extract_plan("a</planning>b</think> final plan"), "final plan");
  EXPECT_EQ(extract_plan("  just a plan \n"), "just a plan");
  EXPECT_LE(extract_plan(std::string(50000, 'p')).size(), kMaxPlanChars + 100);
}

TEST(ParseTranslationScoreTest, ScoreLineFirstTokenOrZero) {
  EXPECT_DOUBLE_EQ(parse_translation_score("Reasoning...\nSCORE: 7\n"), 7.0);
  EXPECT_DOUBLE_EQ(parse_translation_score("score:8.5"), 8.5);
  EXPECT_DOUBLE_EQ(parse_translation_score("6 because most ops are in Pallas"), 6.0);
  EXPECT_DOUBLE_EQ(parse_translation_score("6/10"), 0.0);  // float("6/10") fails in Python
  EXPECT_DOUBLE_EQ(parse_translation_score("no idea"), 0.0);
  EXPECT_DOUBLE_EQ(parse_translation_score("SCORE: 42"), 10.0);
  EXPECT_DOUBLE_EQ(parse_translation_score("SCORE: -3"), 0.0);
  EXPECT_DOUBLE_EQ(parse_translation_score("SCORE: nan"), 0.0);
}

}  // namespace
}  // namespace palladium
