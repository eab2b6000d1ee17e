// Autocomp's should_early_stop (autocomp.md §1.7), one test per clause.
#include "search/early_stop.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace palladium {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(EarlyStopTest, WindowZeroNeverStops) {
  EXPECT_FALSE(should_early_stop({1, 1, 1, 1}, 4, {0, 1.0}, 0));
}

TEST(EarlyStopTest, NotBeforeWindowPlusOneGenerations) {
  // E = 2: generation 2 cannot stop, generation 3 compares losses[2] with losses[0].
  EXPECT_FALSE(should_early_stop({1, 1}, 2, {2, 1.0}, 0));
  EXPECT_TRUE(should_early_stop({1, 1, 1}, 3, {2, 1.0}, 0));
}

TEST(EarlyStopTest, CountsOnlyAfterTranslationPlusWindow) {
  // Translation ended at generation 3: generations up to 3 + E = 5 never stop.
  std::vector<double> flat(6, 0.5);
  EXPECT_FALSE(should_early_stop(flat, 5, {2, 1.0}, 3));
  EXPECT_TRUE(should_early_stop(flat, 6, {2, 1.0}, 3));
}

TEST(EarlyStopTest, RatioAgainstThreshold) {
  // 0.9 / 1.0 = 0.9: improved by 10%.
  EXPECT_FALSE(should_early_stop({1.0, 0.95, 0.9}, 3, {2, 1.0}, 0));
  EXPECT_TRUE(should_early_stop({1.0, 0.95, 0.9}, 3, {2, 0.85}, 0));
  EXPECT_FALSE(should_early_stop({1.0, 0.95, 0.9}, 3, {2, 0.95}, 0));
}

TEST(EarlyStopTest, ZeroOldLossAndInfinitiesNeverStop) {
  EXPECT_FALSE(should_early_stop({0.0, 0.0, 0.0}, 3, {2, 1.0}, 0));
  EXPECT_FALSE(should_early_stop({kInf, kInf, kInf}, 3, {2, 1.0}, 0));
  EXPECT_FALSE(should_early_stop({kInf, 1.0, 1.0}, 3, {2, 1.0}, 0));
}

TEST(EarlyStopTest, TooFewLossesThrows) {
  EXPECT_THROW(should_early_stop({1.0}, 3, {2, 1.0}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
