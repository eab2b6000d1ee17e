#include "common/fnv1a.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

// Reference vectors from the FNV specification (draft-eastlake-fnv).
TEST(Fnv1aTest, MatchesReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fnv1aTest, HexIsSixteenLowercaseDigits) {
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64_hex("foobar"), "85944171f73967e8");
}

TEST(Fnv1aTest, IsConstexpr) {
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace palladium
