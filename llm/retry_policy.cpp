#include "llm/retry_policy.hpp"

#include <algorithm>

namespace palladium {

RetryPolicy::RetryPolicy(RetryOptions options) : options_(options), state_(options.jitter_seed) {}

uint64_t RetryPolicy::next_random() {
  // splitmix64: specified bit for bit, unlike std:: distributions.
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::optional<std::chrono::milliseconds> RetryPolicy::next_delay(
    Errc code, int attempts, std::optional<std::chrono::milliseconds> retry_after) {
  using std::chrono::milliseconds;
  if (!retryable(code) || attempts >= options_.max_attempts) return std::nullopt;
  const int shift = std::clamp(attempts - 1, 0, 30);
  const int64_t ceiling =
      std::min<int64_t>(options_.max_delay.count(), options_.base_delay.count() << shift);
  const int64_t jittered =
      ceiling <= 0 ? 0 : static_cast<int64_t>(next_random() % static_cast<uint64_t>(ceiling + 1));
  int64_t wait = jittered;
  if (retry_after) wait = std::max(wait, std::min(retry_after->count(),
                                                  options_.max_retry_after.count()));
  return milliseconds(wait);
}

}  // namespace palladium
