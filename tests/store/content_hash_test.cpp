#include "store/content_hash.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(ContentHashTest, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string("a\0b", 3)), sha256_hex(std::string("a\0b", 3)));
  EXPECT_NE(sha256_hex(std::string("a\0b", 3)), sha256_hex("a"));
}

TEST(ContentHashTest, PromptHashKeepsSystemAndUserApart) {
  EXPECT_NE(prompt_hash("ab", "c"), prompt_hash("a", "bc"));
  EXPECT_NE(prompt_hash("x", ""), prompt_hash("", "x"));
  EXPECT_EQ(prompt_hash("s", "u"), sha256_hex(sha256_hex("s") + sha256_hex("u")));
}

}  // namespace
}  // namespace palladium
