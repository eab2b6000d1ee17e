#include "analysis/fast_p.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

WorkloadSummary w(int correct, double best) {
  WorkloadSummary s;
  s.candidates = 3;
  s.correct = correct;
  s.best_speedup = best;
  return s;
}

TEST(FastP, CountsCorrectWorkloadsStrictlyAboveP) {
  // 2.5x, 1.1x, correct but untimed (1.0), unsolved (1.0), a correct kernel slower than XLA.
  std::vector<WorkloadSummary> suite = {w(1, 2.5), w(2, 1.1), w(1, 1.0), w(0, 1.0), w(1, 0.8)};
  EXPECT_DOUBLE_EQ(fast_p(suite, 0.0), 4.0 / 5);  // = solved / suite
  EXPECT_DOUBLE_EQ(fast_p(suite, 1.0), 2.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(suite, 1.2), 1.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(suite, 2.0), 1.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(suite, 2.5), 0.0);  // strictly faster
  EXPECT_DOUBLE_EQ(fast_p({}, 1.0), 0.0);
}

}  // namespace
}  // namespace palladium
