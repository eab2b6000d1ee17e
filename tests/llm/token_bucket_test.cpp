#include "llm/token_bucket.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace palladium {
namespace {

using namespace std::chrono_literals;
using TimePoint = TokenBucket::TimePoint;

TEST(TokenBucketTest, StartsFullAndRefillsAtItsRate) {
  const TimePoint t0{};
  TokenBucket b(2, 1.0, t0);
  EXPECT_TRUE(b.can_take(2, t0));
  b.take(2, t0);
  EXPECT_FALSE(b.can_take(1, t0));
  EXPECT_FALSE(b.can_take(1, t0 + 999ms));
  EXPECT_TRUE(b.can_take(1, t0 + 1s));
  EXPECT_EQ(b.available_at(1, t0 + 500ms), t0 + 1s);
  EXPECT_DOUBLE_EQ(b.level(t0 + 10s), 2.0);  // never above capacity
}

TEST(TokenBucketTest, AFullBucketLetsABigTakeThroughAndThenWaitsOutTheDebt) {
  const TimePoint t0{};
  TokenBucket b(100, 10.0, t0);
  ASSERT_TRUE(b.can_take(500, t0));  // bigger than the capacity, but the bucket is full
  b.take(500, t0);
  EXPECT_DOUBLE_EQ(b.level(t0), -400.0);
  EXPECT_FALSE(b.can_take(1, t0 + 40s));
  EXPECT_TRUE(b.can_take(1, t0 + 40s + 100ms));
}

TEST(TokenBucketTest, GiveBackNeverExceedsCapacity) {
  const TimePoint t0{};
  TokenBucket b(10, 1.0, t0);
  b.take(8, t0);
  b.give_back(100, t0);
  EXPECT_DOUBLE_EQ(b.level(t0), 10.0);
}

// The property the gateway's requests/min limit rests on: taking whenever allowed, a bucket
// of capacity c and rate (R - c)/60 never lets more than R takes into any 60 s window.
TEST(TokenBucketTest, NoSixtySecondWindowExceedsTheLimit) {
  for (double R : {1.0, 7.0, 60.0, 600.0}) {
    const double cap = std::max(1.0, R / 60.0);
    const TimePoint t0{};
    TokenBucket b(cap, (R - cap) / 60.0 + 1e-12, t0);
    std::deque<TimePoint> window;
    int taken = 0;
    for (TimePoint t = t0; t < t0 + 600s; t += 10ms) {
      while (b.can_take(1, t)) {
        b.take(1, t);
        ++taken;
        window.push_back(t);
      }
      while (!window.empty() && window.front() <= t - 60s) window.pop_front();
      ASSERT_LE(static_cast<double>(window.size()), R) << "R=" << R;
    }
    // ... and it is not a limit of much less: close to R - cap per minute on average.
    EXPECT_GE(taken, static_cast<int>((R - cap) * 10 * 0.99)) << "R=" << R;
  }
}

}  // namespace
}  // namespace palladium
