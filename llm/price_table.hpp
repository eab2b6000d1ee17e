// USD prices per million tokens, read from configs/prices.yaml.
//
// Each entry names a provider and a model (exact, or a prefix ending in "*"), the standard
// input and output prices, optionally the batch-interface prices, and the date and source
// the figures were read from. Thinking tokens are billed as output by both OpenAI and Gemini.
// The most specific entry wins: an exact model name before the longest matching prefix.
//
// Prices change; a run stores the price it used with every call (llm_calls.cost_usd), so a
// report never re-prices history with a newer table.

#ifndef PALLADIUM_LLM_PRICE_TABLE_HPP_
#define PALLADIUM_LLM_PRICE_TABLE_HPP_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llm/provider.hpp"

namespace palladium {

struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  std::optional<double> batch_input_per_mtok;   // unset: the standard price
  std::optional<double> batch_output_per_mtok;
  // Prompt tokens served from the provider's prompt cache (implicit caching); unset: the
  // input price. Under batch, scaled by the batch discount of input.
  std::optional<double> cached_input_per_mtok;
  std::string cached_as_of, cached_source;  // when and where the cached price was read
  std::string as_of;   // when the figures were read
  std::string source;  // where
};

// Thrown for an unreadable or invalid table; what() names the file and the entry.
class PriceTableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PriceTable {
 public:
  struct Entry {
    std::string provider;
    std::string model;  // exact, or a prefix ending in '*'
    Price price;
  };

  // Parses YAML text ({prices: [ {provider, model, input_per_mtok, output_per_mtok,
  // batch_input_per_mtok?, batch_output_per_mtok?, cached_input_per_mtok?, as_of, source}, ... ]}). Throws
  // PriceTableError naming `origin` and the entry for unknown keys, missing or negative
  // prices, or a missing as_of/source.
  static PriceTable parse(const std::string& yaml_text, const std::string& origin);
  static PriceTable load(const std::string& path);

  std::optional<Price> find(const std::string& provider, const std::string& model) const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// The dollar cost of `usage` at `price` (batch prices when `batch` and the entry has them):
// uncached prompt tokens at the input price, usage.cached_prompt_tokens at the cached price.
double cost_usd(const Price& price, const Usage& usage, bool batch = false);

// What `usage` would have cost with no prompt cache hit, minus what it cost: the money the
// provider's prompt cache saved.
double cache_savings_usd(const Price& price, const Usage& usage, bool batch = false);

}  // namespace palladium

#endif  // PALLADIUM_LLM_PRICE_TABLE_HPP_
