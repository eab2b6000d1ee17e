// A rolling-window dollar limit over committed cost (llm.max_usd_per_window over
// llm.spend_window_s; Gemini Tier 1 caps spend at $10 per rolling 10 minutes and answers 429
// RESOURCE_EXHAUSTED past it).
//
// Each call is charged at its start time: its worst case while it runs, its real cost once it
// settles (never more than the worst case unless the server overran its output limit). A call
// may start at `now` only if the calls started in (now - window, now] plus its own worst case
// stay within the limit. Every window [a, a + window) then holds at most the limit: the
// latest start in it was checked against all the others, which lie within one window before it.
//
// Not thread-safe; times are the caller's (an injected clock).

#ifndef PALLADIUM_LLM_SPEND_WINDOW_HPP_
#define PALLADIUM_LLM_SPEND_WINDOW_HPP_

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace palladium {

class SpendWindow {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  SpendWindow(double limit_usd, std::chrono::milliseconds window);

  // The committed cost of the calls started in (now - window, now].
  double committed(TimePoint now);
  bool fits(double estimate_usd, TimePoint now);
  // When a call of `estimate_usd` will fit if nothing else starts (now when it fits; nullopt
  // when it can never fit: it alone exceeds the limit).
  std::optional<TimePoint> fits_at(double estimate_usd, TimePoint now);
  void commit(uint64_t call_id, double estimate_usd, TimePoint now);
  void settle(uint64_t call_id, double actual_usd);

  double limit() const { return limit_; }
  std::chrono::milliseconds window() const { return window_; }

 private:
  struct Charge {
    uint64_t call_id;
    TimePoint at;
    double usd;
  };
  void expire(TimePoint now);

  double limit_;
  std::chrono::milliseconds window_;
  std::deque<Charge> charges_;  // in start order
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_SPEND_WINDOW_HPP_
