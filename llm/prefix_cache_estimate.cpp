#include "llm/prefix_cache_estimate.hpp"

#include <algorithm>
#include <iterator>

namespace palladium {
namespace {

size_t common_prefix(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  return static_cast<size_t>(std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n),
                                           b.begin())
                                 .first -
                             a.begin());
}

}  // namespace

int64_t PrefixCacheEstimate::add(const std::string& prompt) {
  size_t shared = 0;
  auto next = seen_.lower_bound(prompt);
  if (next != seen_.end()) shared = common_prefix(*next, prompt);
  if (next != seen_.begin()) shared = std::max(shared, common_prefix(*std::prev(next), prompt));
  const auto [it, fresh] = seen_.insert(prompt);
  if (fresh) {
    order_.push_back(it);
    if (order_.size() > max_prompts_) {
      seen_.erase(order_.front());
      order_.pop_front();
    }
  }
  int64_t cached = static_cast<int64_t>(shared / 4) / block_tokens_ * block_tokens_;
  if (cached < min_tokens_) cached = 0;
  prompt_tokens_ += static_cast<int64_t>((prompt.size() + 3) / 4);
  cached_tokens_ += cached;
  return cached;
}

double PrefixCacheEstimate::share() const {
  return prompt_tokens_ > 0 ? static_cast<double>(cached_tokens_) / prompt_tokens_ : 0.0;
}

}  // namespace palladium
