// A token bucket on an injected clock: the gateway's requests/min and tokens/min limits.
//
// The bucket holds at most `capacity` tokens and refills at `rate_per_second`. take() may
// overdraw (the level goes negative) when the bucket is full: a single call bigger than the
// capacity must still be able to start, and then waits out its debt before the next one.
// So in any window of length W at most capacity + rate * W tokens are taken, plus at most
// one overdraw: RateLimits (llm/rate_limits.hpp) picks capacity and rate so that a
// requests/min limit of R is never exceeded in any 60 s window.
//
// No clock is read here: every method takes `now`. Times must not go backwards (a smaller
// `now` is treated as the last one seen). Not thread-safe.

#ifndef PALLADIUM_LLM_TOKEN_BUCKET_HPP_
#define PALLADIUM_LLM_TOKEN_BUCKET_HPP_

#include <chrono>

namespace palladium {

class TokenBucket {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Starts full at `start`. capacity > 0, rate_per_second > 0.
  TokenBucket(double capacity, double rate_per_second, TimePoint start);

  double level(TimePoint now);

  // True if `amount` may be taken now: the level covers it, or the bucket is full.
  bool can_take(double amount, TimePoint now);
  // Takes `amount` (the caller checked can_take).
  void take(double amount, TimePoint now);
  // Returns tokens taken in excess (an estimate above what was used); never above capacity.
  void give_back(double amount, TimePoint now);

  // The earliest time can_take(amount) holds; `now` if it already does.
  TimePoint available_at(double amount, TimePoint now);

  double capacity() const { return capacity_; }
  double rate_per_second() const { return rate_; }

 private:
  void refill(TimePoint now);

  double capacity_;
  double rate_;
  double level_;
  TimePoint last_;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_TOKEN_BUCKET_HPP_
