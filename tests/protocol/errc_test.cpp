#include "protocol/errc.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(ErrcTest, OnlyTransientCodesAreRetryable) {
  EXPECT_TRUE(retryable(Errc::unavailable));
  EXPECT_TRUE(retryable(Errc::deadline_exceeded));
  EXPECT_TRUE(retryable(Errc::resource_exhausted));
  EXPECT_TRUE(retryable(Errc::aborted));
  EXPECT_FALSE(retryable(Errc::invalid_argument));
  EXPECT_FALSE(retryable(Errc::unauthenticated));
  EXPECT_FALSE(retryable(Errc::permission_denied));
  EXPECT_FALSE(retryable(Errc::out_of_range));
  EXPECT_FALSE(retryable(Errc::internal));
}

TEST(ErrcTest, SpellingsRoundTrip) {
  for (Errc c : {Errc::unavailable, Errc::deadline_exceeded, Errc::resource_exhausted,
                 Errc::aborted, Errc::invalid_argument, Errc::not_found, Errc::already_exists,
                 Errc::permission_denied, Errc::unauthenticated, Errc::failed_precondition,
                 Errc::out_of_range, Errc::unimplemented, Errc::internal, Errc::data_loss,
                 Errc::cancelled}) {
    EXPECT_EQ(errc_from_string(to_string(c)), c) << to_string(c);
  }
  EXPECT_EQ(to_string(static_cast<Errc>(99)), "unknown");
  EXPECT_FALSE(errc_from_string("ok").has_value());
  EXPECT_FALSE(errc_from_string("Unavailable").has_value());
}

}  // namespace
}  // namespace palladium
