#include "llm/spend_meter.hpp"

namespace palladium {

SpendMeter::SpendMeter(std::optional<double> cap_usd, double already_spent)
    : cap_(cap_usd), realised_(already_spent) {}

bool SpendMeter::fits(double estimate_usd) const {
  if (!cap_) return true;
  // A relative epsilon: a cap that exactly equals the sum must not fail on rounding.
  return committed() + estimate_usd <= *cap_ * (1 + 1e-12);
}

void SpendMeter::commit(uint64_t call_id, double estimate_usd) {
  estimates_[call_id] += estimate_usd;
  in_flight_ += estimate_usd;
}

void SpendMeter::settle(uint64_t call_id, double actual_usd) {
  auto it = estimates_.find(call_id);
  if (it != estimates_.end()) {
    in_flight_ -= it->second;
    estimates_.erase(it);
    if (estimates_.empty()) in_flight_ = 0.0;  // no drift from float sums
  }
  realised_ += actual_usd;
}

}  // namespace palladium
