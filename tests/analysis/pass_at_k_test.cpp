#include "analysis/pass_at_k.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace palladium {
namespace {

// Hand computations of 1 - C(n-c, k) / C(n, k).
TEST(PassAtK, MatchesTheBinomialFormByHand) {
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 1), 1.0 - 3.0 / 5.0);      // C(3,1)/C(5,1)
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 2), 1.0 - 3.0 / 10.0);     // C(3,2)/C(5,2)
  EXPECT_DOUBLE_EQ(pass_at_k(10, 1, 5), 1.0 - 126.0 / 252.0);  // C(9,5)/C(10,5)
  EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-15);  // C(7,5)/C(10,5)
  EXPECT_DOUBLE_EQ(pass_at_k(4, 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(5, 3, 3), 1.0);  // only 2 wrong: any 3 hold a correct one
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
}

TEST(PassAtK, RejectsKAboveNAndImpossibleCounts) {
  EXPECT_THROW(pass_at_k(4, 1, 5), std::invalid_argument);
  EXPECT_THROW(pass_at_k(4, 5, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(4, 1, 0), std::invalid_argument);
}

TEST(PassAtK, SuiteMeanCountsEmptyWorkloadsAsZeroAndStopsWhereNRunsOut) {
  std::vector<PassCount> suite = {{5, 2}, {10, 1}, {0, 0}};
  EXPECT_DOUBLE_EQ(*suite_pass_at_k(suite, 1), (0.4 + 0.1 + 0.0) / 3);
  EXPECT_DOUBLE_EQ(*suite_pass_at_k(suite, 5), (1.0 + 0.5 + 0.0) / 3);
  EXPECT_FALSE(suite_pass_at_k(suite, 10).has_value());  // 5 candidates cannot give pass@10
  EXPECT_FALSE(suite_pass_at_k({{0, 0}}, 1).has_value());
}

}  // namespace
}  // namespace palladium
