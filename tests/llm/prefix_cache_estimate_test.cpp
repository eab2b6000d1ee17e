#include "llm/prefix_cache_estimate.hpp"

#include <gtest/gtest.h>

#include <random>

namespace palladium {
namespace {

std::string text(size_t n, char c) { return std::string(n, c); }

TEST(PrefixCacheEstimate, ThePrefixSharedWithAnEarlierPromptIsCachedInWholeBlocks) {
  PrefixCacheEstimate e(/*min_tokens=*/1024, /*block_tokens=*/128);
  const std::string stable = text(4 * 1300, 's');  // 1300 tokens
  EXPECT_EQ(e.add(stable + "first"), 0);           // nothing earlier
  EXPECT_EQ(e.add(stable + "second"), 1280);       // 1300 tokens shared, whole blocks: 10 * 128
  EXPECT_EQ(e.add("other" + stable), 0);           // a different start shares nothing
  EXPECT_EQ(e.cached_tokens(), 1280);
  EXPECT_EQ(e.prompt_tokens(), (4 * 1300 + 5 + 3) / 4 + (4 * 1300 + 6 + 3) / 4 +
                                   (4 * 1300 + 5 + 3) / 4);
}

TEST(PrefixCacheEstimate, NothingBelowTheMinimumIsCached) {
  PrefixCacheEstimate e(1024, 128);
  const std::string stable = text(4 * 1000, 's');  // 1000 tokens: under 1024
  e.add(stable + "a");
  EXPECT_EQ(e.add(stable + "b"), 0);
  EXPECT_DOUBLE_EQ(e.share(), 0.0);
}

TEST(PrefixCacheEstimate, OnlyTheLatestPromptsAreRemembered) {
  PrefixCacheEstimate e(/*min_tokens=*/1, /*block_tokens=*/1, /*max_prompts=*/2);
  e.add("aaaaaaaa-first");
  e.add("bbbbbbbb");
  e.add("cccccccc");  // "aaaaaaaa-first" is forgotten
  EXPECT_EQ(e.add("aaaaaaaa-again"), 0);
  EXPECT_EQ(e.add("cccccccc-again"), 2);  // still remembered: 8 characters, 2 tokens
}

// The sorted-neighbour search must find the same longest prefix as comparing with every
// earlier prompt.
TEST(PrefixCacheEstimate, AgreesWithTheExhaustiveSearch) {
  std::mt19937 rng(7);
  std::vector<std::string> earlier;
  PrefixCacheEstimate e(/*min_tokens=*/1, /*block_tokens=*/1);
  for (int i = 0; i < 300; ++i) {
    std::string p;
    const size_t n = 4 + rng() % 60;
    for (size_t k = 0; k < n; ++k) p += static_cast<char>('a' + rng() % 3);
    size_t best = 0;
    for (const auto& old : earlier) {
      size_t k = 0;
      while (k < old.size() && k < p.size() && old[k] == p[k]) ++k;
      best = std::max(best, k);
    }
    const int64_t want = static_cast<int64_t>(best / 4);
    EXPECT_EQ(e.add(p), want) << p;
    earlier.push_back(p);
  }
}

}  // namespace
}  // namespace palladium
