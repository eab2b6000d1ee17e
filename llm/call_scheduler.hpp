// The llm_gateway's policy, as a plain class on an injected clock: which waiting samples go
// out in which call, and when.
//
// Rules (each has a test in tests/llm/call_scheduler_test.cpp, and the gateway's versions
// against the local servers in tests/actors/llm_gateway_test.cpp):
//   - Identical samples are answered once: a sample is (workload, role, seed, temperature
//     override, system prompt, user prompt, sample index); a second request for a sample that
//     is queued or in flight waits for the same answer (it is delivered as not paid).
//   - Coalescing: samples that differ only in their index share one call of n samples
//     (OpenAI n, Gemini candidateCount), up to max_samples_per_call. A group waits at most
//     coalesce_window after its oldest sample arrived for more samples to join, and goes at
//     once when it is full.
//   - First come, first served: groups start in the order their oldest sample arrived.
//   - At most max_concurrent calls in flight. Calls for which `in_job` is true (a batch
//     job's, in split mode) neither count toward the cap nor wait for it, and have no total
//     deadline: a job holds its calls for hours, and they must not starve the online ones of
//     slots nor fail at an online deadline. Every other limit applies to them.
//   - Token buckets: requests/min R is enforced with capacity max(1, R/60) and refill
//     (R - capacity)/60 per second, so no 60 s window ever holds more than R call starts;
//     tokens/min T likewise, charging each call its estimate (prompt chars / 4 plus
//     n * max_output_tokens) at start and giving back what it did not use when it ends.
//   - Retries: a retryable failure puts the call's samples back with a wait from
//     RetryPolicy (exponential backoff with jitter, never shorter than Retry-After); a 429
//     also pauses every new call of the provider for that wait. Out of attempts, or a
//     non-retryable code, fails the samples with the provider's error.
//   - 401 and 403 fail every waiting and future sample at once: no key will start working
//     by itself. 400 fails only the call's samples.
//   - A call that answers fewer samples than asked delivers those and queues the rest again.
//   - Spend rate (llm/spend_window.hpp): with max_usd_per_window, a call starts only if the
//     committed cost of the calls started in the last spend_window plus its own worst case
//     fits; otherwise it waits until enough has left the window. A call whose worst case
//     alone exceeds the limit fails with Errc::out_of_range.
//   - Total deadline (call_deadline): a sample not answered within call_deadline of its
//     first attempt's start, retries and backoff waits included, fails with Errc::deadline_exceeded and a
//     message starting "call_deadline"; an attempt's HTTP timeout is cut to what is left, and
//     a retry that could only start after the deadline is not waited for.
//   - Learned concurrency (AIMD): a 429 halves the number of calls allowed in flight (at most
//     once per pause it asks for), each success adds 1/window, up to max_concurrent; the
//     current value is stats().concurrency_window.
//   - Dollar cap (llm/spend_meter.hpp): a call starts only if its worst case fits under the
//     cap. If it does not fit while calls are running, it waits for them to settle; if it
//     does not fit with nothing running, the cap is reached: every waiting and future sample
//     fails with Errc::out_of_range, and calls already running finish (drain).
//
// Outputs are plain values (calls to start, answers to deliver, failures); the owner does
// the I/O. No clock is read: every method takes `now`, which must not go backwards.
// Not thread-safe.

#ifndef PALLADIUM_LLM_CALL_SCHEDULER_HPP_
#define PALLADIUM_LLM_CALL_SCHEDULER_HPP_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llm/call_runner.hpp"
#include "llm/retry_policy.hpp"
#include "llm/spend_meter.hpp"
#include "llm/spend_window.hpp"
#include "llm/token_bucket.hpp"

namespace palladium {

struct SchedulerOptions {
  std::string provider = "llm";  // names the provider in error messages
  int max_concurrent = 8;
  double requests_per_minute = 0;  // 0 = no limit
  double tokens_per_minute = 0;    // 0 = no limit
  int max_samples_per_call = 1;
  std::chrono::milliseconds coalesce_window{20};
  int max_output_tokens = 8192;  // per sample: the worst case charged before a call
  RetryOptions retry;
  std::optional<double> max_usd;  // the dollar cap; unset = none
  // The spend-rate limit: committed dollars per rolling window; unset = none.
  std::optional<double> max_usd_per_window;
  std::chrono::milliseconds spend_window{std::chrono::minutes(10)};
  // The total deadline of a sample, retries included; unset = none.
  std::optional<std::chrono::milliseconds> call_deadline;
  bool adaptive_concurrency = true;  // AIMD on 429s
  // Calls that go into a provider's batch job (llm/split_runner.hpp); unset = none.
  std::function<bool(const ChatRequest&)> in_job;
  double already_spent_usd = 0;   // counts toward the cap (a resumed run)
  // The dollar cost of a usage; unset = calls are free (offline providers).
  std::function<double(const Usage&)> cost;
};

class CallScheduler {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  struct Start {
    uint64_t call_id = 0;
    ProviderCall call;
  };
  struct Delivery {
    uint64_t ticket = 0;
    uint64_t call_id = 0;
    int sample_index = 0;
    Completion completion;
    // This sample's share of the call's usage and cost; zero for a ticket that shared the
    // answer of another ticket for the same sample (paid = false).
    Usage usage;
    double cost_usd = 0;
    bool paid = true;
    int samples_in_call = 1;
    CallResult call;  // the call's totals (model, latency, usage), completions cleared
  };
  struct Failure {
    uint64_t ticket = 0;
    ProviderError error;
  };
  struct Step {
    std::vector<Start> start;
    std::vector<Delivery> deliver;
    std::vector<Failure> fail;
    bool empty() const { return start.empty() && deliver.empty() && fail.empty(); }
  };
  struct Stats {
    int64_t calls_started = 0;
    int64_t calls_failed = 0;
    int64_t retries = 0;            // samples put back after a retryable failure
    int64_t samples_delivered = 0;  // tickets answered, shared ones included
    int64_t samples_shared = 0;     // tickets answered by another ticket's call
    int64_t samples_coalesced = 0;  // samples that went out in calls with n > 1
    int in_flight = 0;              // job calls included
    int queued = 0;                 // samples waiting (not in flight)
    int64_t rate_limited = 0;       // calls answered 429
    int64_t deadline_failures = 0;  // samples failed at their total deadline
    double concurrency_window = 0;  // calls allowed in flight now (AIMD), <= max_concurrent
    int64_t spend_window_waits = 0;  // times a call waited for the spend window
    // Which limit held back the oldest waiting call at the last poll: "concurrency",
    // "concurrency (learned from 429s)", "429 pause", "requests/min", "tokens/min",
    // "spend window", "dollar cap"; "" when nothing waited on a limit (no call waiting, or
    // waiting only to coalesce or for a retry's backoff).
    std::string holding;
  };

  CallScheduler(SchedulerOptions options, TimePoint now);

  // Queues a request; returns its ticket. Nothing starts until poll().
  uint64_t submit(const ChatRequest& request, TimePoint now);

  // Starts what may start now and fails what must fail (cap reached, key refused).
  Step poll(TimePoint now);

  // The outcome of a started call: answers and failures for its tickets. Samples that will
  // be tried again stay queued; call poll() afterwards.
  Step finish(uint64_t call_id, const CallOutcome& outcome, TimePoint now);

  // When poll() may have something new to do without any call finishing; nullopt when only
  // a call's end (or a submit) can change anything.
  std::optional<TimePoint> next_wakeup() const { return wakeup_; }

  // Set once the dollar cap stopped the issuing of calls; the message says why.
  const std::optional<std::string>& stopped() const { return stopped_; }
  const SpendMeter& spend() const { return spend_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Slot {
    uint64_t id = 0;  // FIFO order: lower ids are older
    std::string group;
    std::string key;  // group + sample index
    ChatRequest request;
    std::vector<uint64_t> tickets;
    TimePoint enqueued{}, not_before{};
    std::optional<TimePoint> deadline;
    int attempts = 0;
    bool in_flight = false;
    std::string last_error;  // of the latest failed attempt, for the deadline's message
  };
  struct InFlightCall {
    std::vector<uint64_t> slots;
    double est_tokens = 0;
    double est_cost = 0;
    bool in_job = false;  // exempt from the concurrency cap
  };

  void fail_all_queued(const ProviderError& error, Step& step);
  void fail_expired(TimePoint now, Step& step);
  ProviderError deadline_error(const Slot& slot) const;
  void requeue(Slot& slot, TimePoint not_before);
  void note_wakeup(TimePoint t);
  double estimate_tokens(const ChatRequest& request, int n) const;
  double estimate_cost(const ChatRequest& request, int n) const;
  bool in_job(const ChatRequest& request) const { return o_.in_job && o_.in_job(request); }

  SchedulerOptions o_;
  RetryPolicy retry_;
  SpendMeter spend_;
  std::optional<SpendWindow> window_;
  double concurrency_ = 1;
  TimePoint last_decrease_{};
  std::optional<TokenBucket> requests_;
  std::optional<TokenBucket> tokens_;
  TimePoint paused_until_{};
  std::optional<ProviderError> refused_;  // a 401/403: every sample fails with it
  std::optional<std::string> stopped_;    // the dollar cap
  std::optional<TimePoint> wakeup_;

  uint64_t next_ticket_ = 1, next_slot_ = 1, next_call_ = 1;
  std::map<uint64_t, Slot> slots_;               // every unanswered sample
  std::map<std::string, uint64_t> slot_by_key_;  // sample identity -> slot
  // group -> its queued (not in flight) slots, oldest first
  std::map<std::string, std::set<uint64_t>> queued_by_group_;
  std::map<uint64_t, InFlightCall> calls_;
  int capped_in_flight_ = 0;  // calls_ that count toward the concurrency cap
  Stats stats_;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_CALL_SCHEDULER_HPP_
