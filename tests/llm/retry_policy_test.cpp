#include "llm/retry_policy.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

using namespace std::chrono_literals;

TEST(RetryPolicyTest, NonRetryableCodesAreNeverRetried) {
  RetryPolicy p;
  for (Errc c : {Errc::invalid_argument, Errc::unauthenticated, Errc::permission_denied,
                 Errc::not_found, Errc::out_of_range, Errc::internal}) {
    EXPECT_FALSE(p.next_delay(c, 1, std::nullopt)) << to_string(c);
  }
}

TEST(RetryPolicyTest, StopsAfterMaxAttempts) {
  RetryOptions o;
  o.max_attempts = 3;
  RetryPolicy p(o);
  EXPECT_TRUE(p.next_delay(Errc::unavailable, 1, std::nullopt));
  EXPECT_TRUE(p.next_delay(Errc::unavailable, 2, std::nullopt));
  EXPECT_FALSE(p.next_delay(Errc::unavailable, 3, std::nullopt));
}

TEST(RetryPolicyTest, BackoffIsJitteredUnderAGrowingCeiling) {
  RetryOptions o;
  o.max_attempts = 20;
  o.base_delay = 100ms;
  o.max_delay = 1000ms;
  RetryPolicy p(o);
  for (int attempt = 1; attempt < 12; ++attempt) {
    const int64_t ceiling = std::min<int64_t>(1000, 100LL << (attempt - 1));
    for (int i = 0; i < 50; ++i) {
      auto d = p.next_delay(Errc::unavailable, attempt, std::nullopt);
      ASSERT_TRUE(d);
      EXPECT_GE(d->count(), 0);
      EXPECT_LE(d->count(), ceiling);
    }
  }
}

TEST(RetryPolicyTest, JitterIsReproducibleFromItsSeed) {
  RetryPolicy a, b;
  for (int i = 1; i < 6; ++i)
    EXPECT_EQ(a.next_delay(Errc::unavailable, i, std::nullopt),
              b.next_delay(Errc::unavailable, i, std::nullopt));
}

TEST(RetryPolicyTest, RetryAfterIsAFloorWithACap) {
  RetryOptions o;
  o.base_delay = 10ms;
  o.max_delay = 20ms;
  o.max_retry_after = 60s;
  RetryPolicy p(o);
  EXPECT_EQ(p.next_delay(Errc::resource_exhausted, 1, 5s)->count(), 5000);
  EXPECT_EQ(p.next_delay(Errc::resource_exhausted, 1, std::chrono::hours(24))->count(), 60000);
}

}  // namespace
}  // namespace palladium
