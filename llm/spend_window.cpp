#include "llm/spend_window.hpp"

namespace palladium {

SpendWindow::SpendWindow(double limit_usd, std::chrono::milliseconds window)
    : limit_(limit_usd), window_(window) {}

void SpendWindow::expire(TimePoint now) {
  while (!charges_.empty() && now - charges_.front().at >= window_) charges_.pop_front();
}

double SpendWindow::committed(TimePoint now) {
  expire(now);
  double sum = 0;
  for (const auto& c : charges_) sum += c.usd;
  return sum;
}

bool SpendWindow::fits(double estimate_usd, TimePoint now) {
  // The same relative epsilon as the run's cap: a sum exactly at the limit fits.
  return committed(now) + estimate_usd <= limit_ * (1 + 1e-12);
}

std::optional<SpendWindow::TimePoint> SpendWindow::fits_at(double estimate_usd, TimePoint now) {
  if (estimate_usd > limit_ * (1 + 1e-12)) return std::nullopt;
  double sum = committed(now);
  if (sum + estimate_usd <= limit_ * (1 + 1e-12)) return now;
  for (const auto& c : charges_) {  // oldest first: when enough has left the window
    sum -= c.usd;
    if (sum + estimate_usd <= limit_ * (1 + 1e-12)) return c.at + window_;
  }
  return now + window_;
}

void SpendWindow::commit(uint64_t call_id, double estimate_usd, TimePoint now) {
  expire(now);
  charges_.push_back({call_id, now, estimate_usd});
}

void SpendWindow::settle(uint64_t call_id, double actual_usd) {
  for (auto& c : charges_) {
    if (c.call_id == call_id) {
      c.usd = actual_usd;
      return;
    }
  }
}

}  // namespace palladium
