// When to try a failed LLM call again, and how long to wait first.
//
// Only retryable codes (protocol/errc.hpp: 429, 5xx, timeouts, dropped connections, malformed
// bodies) are retried, at most max_attempts calls in all. The wait before attempt k+1 is
// "full jitter" exponential backoff, uniform in [0, min(max_delay, base * 2^(k-1))], but never
// shorter than what the server asked for (Retry-After, Gemini RetryInfo), capped at
// max_retry_after so that a hostile header cannot park the run for a day.
//
// The jitter comes from a seeded splitmix64, so a test sees the same delays every run. Not
// thread-safe.

#ifndef PALLADIUM_LLM_RETRY_POLICY_HPP_
#define PALLADIUM_LLM_RETRY_POLICY_HPP_

#include <chrono>
#include <cstdint>
#include <optional>

#include "protocol/errc.hpp"

namespace palladium {

struct RetryOptions {
  int max_attempts = 6;  // calls in all, the first included
  std::chrono::milliseconds base_delay{1000};
  std::chrono::milliseconds max_delay{60000};
  std::chrono::milliseconds max_retry_after{std::chrono::minutes(10)};
  uint64_t jitter_seed = 0x5eed;
};

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryOptions options = {});

  // The wait before the next attempt after `attempts` calls failed with `code`, or nullopt
  // when the call must not be tried again (not retryable, or out of attempts).
  std::optional<std::chrono::milliseconds> next_delay(
      Errc code, int attempts, std::optional<std::chrono::milliseconds> retry_after);

  const RetryOptions& options() const { return options_; }

 private:
  uint64_t next_random();

  RetryOptions options_;
  uint64_t state_;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_RETRY_POLICY_HPP_
