#include "llm/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace palladium {

TokenBucket::TokenBucket(double capacity, double rate_per_second, TimePoint start)
    : capacity_(capacity), rate_(rate_per_second), level_(capacity), last_(start) {}

void TokenBucket::refill(TimePoint now) {
  if (now <= last_) return;
  const double secs = std::chrono::duration<double>(now - last_).count();
  level_ = std::min(capacity_, level_ + secs * rate_);
  last_ = now;
}

double TokenBucket::level(TimePoint now) {
  refill(now);
  return level_;
}

bool TokenBucket::can_take(double amount, TimePoint now) {
  refill(now);
  // A tiny epsilon keeps floating-point refill from missing the exact moment.
  return level_ + 1e-9 >= std::min(amount, capacity_);
}

void TokenBucket::take(double amount, TimePoint now) {
  refill(now);
  level_ -= amount;
}

void TokenBucket::give_back(double amount, TimePoint now) {
  refill(now);
  level_ = std::min(capacity_, level_ + std::max(0.0, amount));
}

TokenBucket::TimePoint TokenBucket::available_at(double amount, TimePoint now) {
  refill(now);
  const double need = std::min(amount, capacity_) - level_;
  if (need <= 1e-9) return std::max(now, last_);
  const double secs = need / rate_;
  // Round up to the next microsecond so that can_take() holds at the returned time.
  const auto delta = std::chrono::microseconds(static_cast<int64_t>(std::ceil(secs * 1e6)));
  return last_ + std::chrono::duration_cast<TimePoint::duration>(delta);
}

}  // namespace palladium
