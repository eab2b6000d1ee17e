// A rolling-window dollar limit over committed cost (llm.max_usd_per_window over
// llm.spend_window_s; Gemini Tier 1 caps spend at $10 per rolling 10 minutes and answers 429
// RESOURCE_EXHAUSTED past it).
//
// A server measures a call's cost at its own arrival time, which lies somewhere between our
// start and our answer; we cannot know where. So a call holds its worst case from its start
// until it settles, and its real cost from its answer time for one window after that
// (never more than the worst case unless the server overran its output limit). A call may
// start at `now` only if every charge still held plus its own worst case stays within the
// limit. Whatever arrival times the server sees, each of its windows then holds at most the
// limit: the call in it that started last was checked against every other one, each still
// running or answered after the window's start. (Charging at the start alone let a slow
// call's arrival fall in the next window: the fake server caught it with a 429.)
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

  // The cost still held: running calls' worst cases, and calls answered in (now - window, now].
  double committed(TimePoint now);
  bool fits(double estimate_usd, TimePoint now);
  // When a call of `estimate_usd` will fit if nothing else starts (now when it fits; nullopt
  // when it can never fit: it alone exceeds the limit).
  std::optional<TimePoint> fits_at(double estimate_usd, TimePoint now);
  void commit(uint64_t call_id, double estimate_usd, TimePoint now);
  // The call answered (or failed) at `now`: its real cost is held for one window from `now`.
  void settle(uint64_t call_id, double actual_usd, TimePoint now);

  double limit() const { return limit_; }
  std::chrono::milliseconds window() const { return window_; }

 private:
  struct Charge {
    uint64_t call_id;
    TimePoint at;  // the answer's time once settled
    double usd;
    bool settled;
  };
  void expire(TimePoint now);

  double limit_;
  std::chrono::milliseconds window_;
  std::deque<Charge> charges_;  // running ones first held, settled ones by answer time
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_SPEND_WINDOW_HPP_
