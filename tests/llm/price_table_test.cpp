#include "llm/price_table.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

const char* kTable = R"(
prices:
  - provider: gemini
    model: gemini-3-flash-preview
    input_per_mtok: 0.5
    output_per_mtok: 3.0
    batch_input_per_mtok: 0.25
    batch_output_per_mtok: 1.5
    cached_input_per_mtok: 0.05
    cached_as_of: "2026-12-03"
    cached_source: https://ai.google.dev/gemini-api/docs/pricing
    as_of: "2026-12-01"
    source: https://ai.google.dev/gemini-api/docs/pricing
  - provider: openai
    model: gpt-5*
    input_per_mtok: 1.25
    output_per_mtok: 10
    as_of: "2026-12-01"
    source: https://openai.com/api/pricing
  - provider: openai
    model: gpt-5-mini*
    input_per_mtok: 0.25
    output_per_mtok: 2
    as_of: "2026-12-01"
    source: https://openai.com/api/pricing
)";

TEST(PriceTableTest, CachedPromptTokensCostTheCachedRateAndTheSavingIsTheDifference) {
  auto t = PriceTable::parse(kTable, "prices.yaml");
  const Price p = *t.find("gemini", "gemini-3-flash-preview");
  EXPECT_EQ(p.cached_as_of, "2026-12-03");
  Usage u;
  u.prompt_tokens = 1000000;
  u.cached_prompt_tokens = 800000;
  u.completion_tokens = 0;
  // 200k fresh at $0.50/M + 800k cached at $0.05/M.
  EXPECT_NEAR(cost_usd(p, u), 0.10 + 0.04, 1e-12);
  EXPECT_NEAR(cache_savings_usd(p, u), 0.40 - 0.04, 1e-12);
  // Under batch the cached rate takes the batch discount too.
  EXPECT_NEAR(cost_usd(p, u, true), 0.05 + 0.02, 1e-12);
  // An entry with no cached price bills cached tokens as input.
  const Price q = *t.find("openai", "gpt-5-2025");
  EXPECT_NEAR(cost_usd(q, u), 1.25, 1e-12);
  EXPECT_NEAR(cache_savings_usd(q, u), 0.0, 1e-12);
}

TEST(PriceTableTest, ACachedPriceNeedsItsOwnDateAndSource) {
  const char* bad = R"(
prices:
  - provider: openai
    model: gpt-x
    input_per_mtok: 1
    output_per_mtok: 2
    cached_input_per_mtok: 0.1
    as_of: "2026-12-01"
    source: s
)";
  try {
    PriceTable::parse(bad, "p.yaml");
    FAIL();
  } catch (const PriceTableError& e) {
    EXPECT_NE(std::string(e.what()).find("prices[0].cached_as_of: is required"), std::string::npos)
        << e.what();
  }
}

TEST(PriceTableTest, ExactThenLongestPrefix) {
  auto t = PriceTable::parse(kTable, "prices.yaml");
  EXPECT_DOUBLE_EQ(t.find("gemini", "gemini-3-flash-preview")->input_per_mtok, 0.5);
  EXPECT_DOUBLE_EQ(t.find("openai", "gpt-5-2025-08-07")->input_per_mtok, 1.25);
  EXPECT_DOUBLE_EQ(t.find("openai", "gpt-5-mini-2025-08-07")->input_per_mtok, 0.25);
  EXPECT_FALSE(t.find("openai", "gemini-3-flash-preview"));
  EXPECT_FALSE(t.find("gemini", "gemini-2.5-pro"));
}

TEST(PriceTableTest, ThinkingIsBilledAsOutputAndBatchHasItsOwnPrice) {
  auto p = *PriceTable::parse(kTable, "x").find("gemini", "gemini-3-flash-preview");
  Usage u;
  u.prompt_tokens = 1'000'000;
  u.completion_tokens = 500'000;
  u.thinking_tokens = 500'000;
  EXPECT_DOUBLE_EQ(cost_usd(p, u), 0.5 + 3.0);
  EXPECT_DOUBLE_EQ(cost_usd(p, u, /*batch=*/true), 0.25 + 1.5);
  auto q = *PriceTable::parse(kTable, "x").find("openai", "gpt-5");
  EXPECT_DOUBLE_EQ(cost_usd(q, u, true), cost_usd(q, u));  // no batch price: the standard one
}

TEST(PriceTableTest, BadEntriesNameTheFileAndTheEntry) {
  auto fails_with = [](const std::string& text, const std::string& needle) {
    try {
      PriceTable::parse(text, "configs/prices.yaml");
    } catch (const PriceTableError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no error for: " << text;
  };
  fails_with("prices: [{provider: a, model: b, input_per_mtok: 1, output_per_mtok: 1, "
             "source: s}]",
             "configs/prices.yaml: prices[0].as_of: is required");
  fails_with("prices: [{provider: a, model: b, input_per_mtok: -1, output_per_mtok: 1, "
             "as_of: x, source: s}]",
             "prices[0].input_per_mtok: must be >= 0");
  fails_with("prices: [{provider: a, model: b, input_per_mtok: 1, output_per_mtok: 1, "
             "as_of: x, source: s, colour: red}]",
             "prices[0].colour: unknown key");
  fails_with("nothing: here", "expected a top-level 'prices:' list");
}

TEST(PriceTableTest, TheShippedTableParses) {
  auto t = PriceTable::load(std::string(PALLADIUM_SOURCE_DIR) + "/configs/prices.yaml");
  EXPECT_TRUE(t.find("gemini", "gemini-3-flash-preview"));
  for (const auto& e : t.entries()) {
    EXPECT_FALSE(e.price.as_of.empty());
    EXPECT_FALSE(e.price.source.empty());
  }
}

}  // namespace
}  // namespace palladium
