// How many prompt tokens a provider's implicit prompt cache would serve, estimated before a
// run from the prompts a dry run builds: the input of `palladium plan`'s cached share.
//
// The rule is the one OpenAI documents for automatic caching and Gemini's implicit caching
// follows: a prompt that shares a prefix with an earlier prompt has that prefix served from
// the cache, counted in whole blocks of `block_tokens`, and nothing below `min_tokens`.
// Tokens are chars / 4 (llm/token_estimate.hpp). It is an upper bound: a real cache evicts
// after minutes of disuse, so a run paced by slow limits gets less.
//
// The longest prefix shared with any earlier prompt is found among the earlier prompts'
// sorted neighbours of the new one (the longest common prefix with a set of strings is
// reached at the lower bound or its predecessor), so a 3,200-prompt study plans in a second.
// Only the latest `max_prompts` are kept: all of them took 100 MB for one 3,200-prompt study
// config, and a sweep has many; a real cache forgets old prefixes too.

#ifndef PALLADIUM_LLM_PREFIX_CACHE_ESTIMATE_HPP_
#define PALLADIUM_LLM_PREFIX_CACHE_ESTIMATE_HPP_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <string>

namespace palladium {

class PrefixCacheEstimate {
 public:
  explicit PrefixCacheEstimate(int64_t min_tokens = 1024, int64_t block_tokens = 128,
                               size_t max_prompts = 1024)
      : min_tokens_(min_tokens), block_tokens_(block_tokens), max_prompts_(max_prompts) {}

  // The cached tokens of `prompt` (the text the provider sees, system part first), after
  // every prompt added before it; then remembers it.
  int64_t add(const std::string& prompt);

  int64_t prompt_tokens() const { return prompt_tokens_; }
  int64_t cached_tokens() const { return cached_tokens_; }
  // cached / prompt tokens; 0 before any prompt.
  double share() const;

 private:
  int64_t min_tokens_, block_tokens_;
  size_t max_prompts_;
  std::set<std::string> seen_;
  std::deque<std::set<std::string>::iterator> order_;  // seen_, oldest first
  int64_t prompt_tokens_ = 0, cached_tokens_ = 0;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_PREFIX_CACHE_ESTIMATE_HPP_
