#include "llm/spend_window.hpp"

#include <algorithm>
#include <vector>

namespace palladium {

SpendWindow::SpendWindow(double limit_usd, std::chrono::milliseconds window)
    : limit_(limit_usd), window_(window) {}

void SpendWindow::expire(TimePoint now) {
  // A running call never expires: the server may not have seen it yet.
  charges_.erase(std::remove_if(charges_.begin(), charges_.end(),
                                [&](const Charge& c) { return c.settled && now - c.at >= window_; }),
                 charges_.end());
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
  std::vector<const Charge*> leaving;  // settled charges, by when they leave the window
  for (const auto& c : charges_)
    if (c.settled) leaving.push_back(&c);
  std::sort(leaving.begin(), leaving.end(),
            [](const Charge* a, const Charge* b) { return a->at < b->at; });
  for (const Charge* c : leaving) {
    sum -= c->usd;
    if (sum + estimate_usd <= limit_ * (1 + 1e-12)) return c->at + window_;
  }
  // Only a running call's answer can free enough; the caller is told again when one settles.
  return now + window_;
}

void SpendWindow::commit(uint64_t call_id, double estimate_usd, TimePoint now) {
  expire(now);
  charges_.push_back({call_id, now, estimate_usd, false});
}

void SpendWindow::settle(uint64_t call_id, double actual_usd, TimePoint now) {
  for (auto& c : charges_) {
    if (c.call_id == call_id && !c.settled) {
      c.usd = actual_usd;
      c.at = std::max(c.at, now);
      c.settled = true;
      return;
    }
  }
}

}  // namespace palladium
