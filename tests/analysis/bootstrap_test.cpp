#include "analysis/bootstrap.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(Bootstrap, OneValueIsItsOwnInterval) {
  auto m = bootstrap_mean({3.5});
  EXPECT_EQ(m.mean, 3.5);
  EXPECT_EQ(m.low, 3.5);
  EXPECT_EQ(m.high, 3.5);
  EXPECT_EQ(m.n, 1);
}

TEST(Bootstrap, NoValuesIsNaNNotZero) {
  auto m = bootstrap_mean({});
  EXPECT_TRUE(std::isnan(m.mean));
  EXPECT_EQ(m.n, 0);
}

TEST(Bootstrap, TwoValuesSpanEachOther) {
  auto m = bootstrap_mean({1.0, 3.0});
  EXPECT_DOUBLE_EQ(m.mean, 2.0);
  EXPECT_DOUBLE_EQ(m.low, 1.0);
  EXPECT_DOUBLE_EQ(m.high, 3.0);
}

TEST(Bootstrap, TheIntervalHoldsTheMeanAndNarrowsWithMoreData) {
  std::vector<double> few, many;
  for (int i = 0; i < 5; ++i) few.push_back(i % 2 ? 1.0 : 0.0);
  for (int i = 0; i < 500; ++i) many.push_back(i % 2 ? 1.0 : 0.0);
  auto a = bootstrap_mean(few), b = bootstrap_mean(many);
  EXPECT_LE(a.low, a.mean);
  EXPECT_GE(a.high, a.mean);
  EXPECT_LT(b.high - b.low, a.high - a.low);
  EXPECT_NEAR(b.high - b.low, 2 * 1.96 * 0.5 / std::sqrt(500.0), 0.02);
}

TEST(Bootstrap, DeterministicForASeed) {
  std::vector<double> v{1, 4, 2, 8, 5};
  auto a = bootstrap_mean(v), b = bootstrap_mean(v);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
}

}  // namespace
}  // namespace palladium
