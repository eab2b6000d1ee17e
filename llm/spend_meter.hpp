// The dollar cap with committed cost (ShinkaEvolve's rule, peers.md):
//
//   committed = realised (what finished calls cost) + in flight (the worst case of every
//               call still running: its prompt plus n * max_output_tokens)
//
// A call may start only if committed + its own worst case stays within the cap, so the run
// never spends past the cap even if every running call used its whole output limit. When a
// call ends its estimate is replaced by its real cost, which frees room for more calls.
// The meter only counts; the scheduler (llm/call_scheduler.hpp) decides what to do when a
// call does not fit (wait for running calls to settle, or stop issuing calls).
//
// Not thread-safe.

#ifndef PALLADIUM_LLM_SPEND_METER_HPP_
#define PALLADIUM_LLM_SPEND_METER_HPP_

#include <cstdint>
#include <map>
#include <optional>

namespace palladium {

class SpendMeter {
 public:
  // No cap when `cap_usd` is unset. `already_spent` counts toward the cap (a resumed run).
  explicit SpendMeter(std::optional<double> cap_usd, double already_spent = 0.0);

  bool fits(double estimate_usd) const;
  void commit(uint64_t call_id, double estimate_usd);
  // Replaces the call's estimate by what it really cost (0 for a failed call).
  void settle(uint64_t call_id, double actual_usd);

  double realised() const { return realised_; }
  double in_flight() const { return in_flight_; }
  double committed() const { return realised_ + in_flight_; }
  std::optional<double> cap() const { return cap_; }

 private:
  std::optional<double> cap_;
  double realised_;
  double in_flight_ = 0.0;
  std::map<uint64_t, double> estimates_;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_SPEND_METER_HPP_
