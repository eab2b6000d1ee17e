#include "llm/call_scheduler.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

using namespace std::chrono_literals;
using TimePoint = CallScheduler::TimePoint;

const TimePoint t0{};

ChatRequest req(const std::string& prompt, int index, uint64_t seed = 0) {
  ChatRequest r;
  r.workload_id = "8p";
  r.system_prompt = "sys";
  r.user_prompt = prompt;
  r.sample_index = index;
  r.seed = seed;
  return r;
}

SchedulerOptions options() {
  SchedulerOptions o;
  o.provider = "openai";
  o.max_concurrent = 4;
  o.max_samples_per_call = 4;
  o.coalesce_window = 20ms;
  o.max_output_tokens = 1000;
  o.retry.base_delay = 100ms;
  o.retry.max_delay = 1000ms;
  return o;
}

CallOutcome answer(int n, int64_t prompt_tokens = 10, int64_t completion_tokens = 0) {
  CallResult r;
  for (int i = 0; i < n; ++i) r.completions.push_back({"answer " + std::to_string(i), "stop", false});
  r.usage.prompt_tokens = prompt_tokens;
  r.usage.completion_tokens = completion_tokens ? completion_tokens : 100 * n;
  r.model = "m";
  return {r, std::nullopt};
}

CallOutcome failure(Errc code, std::optional<std::chrono::milliseconds> retry_after = {}) {
  return {std::nullopt, ProviderError(code, "openai: HTTP x", retry_after)};
}

TEST(CallSchedulerTest, IdenticalPromptsCoalesceIntoOneCallAfterTheWindow) {
  CallScheduler s(options(), t0);
  s.submit(req("p", 0), t0);
  s.submit(req("p", 1), t0 + 5ms);
  s.submit(req("p", 2), t0 + 10ms);
  EXPECT_TRUE(s.poll(t0 + 10ms).start.empty());  // the group may still grow
  ASSERT_TRUE(s.next_wakeup());
  EXPECT_EQ(*s.next_wakeup(), t0 + 20ms);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_EQ(step.start[0].call.sample_indices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.stats().samples_coalesced, 3);
}

TEST(CallSchedulerTest, AFullGroupGoesAtOnce) {
  CallScheduler s(options(), t0);
  for (int i = 0; i < 6; ++i) s.submit(req("p", i), t0);
  auto step = s.poll(t0);
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_EQ(step.start[0].call.sample_indices.size(), 4u);  // max_samples_per_call
  step = s.poll(t0 + 20ms);                                 // the remaining two, after the window
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_EQ(step.start[0].call.sample_indices, (std::vector<int>{4, 5}));
}

TEST(CallSchedulerTest, DifferentSeedsOrPromptsNeverShareACall) {
  CallScheduler s(options(), t0);
  s.submit(req("p", 0, /*seed=*/0), t0);
  s.submit(req("p", 1, /*seed=*/1), t0);
  s.submit(req("q", 2), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 3u);
  for (auto& c : step.start) EXPECT_EQ(c.call.sample_indices.size(), 1u);
}

TEST(CallSchedulerTest, TheSameSampleAskedTwiceIsAnsweredOnceAndPaidOnce) {
  CallScheduler s(options(), t0);
  const uint64_t a = s.submit(req("p", 3), t0);
  auto started = s.poll(t0 + 20ms);
  ASSERT_EQ(started.start.size(), 1u);
  const uint64_t b = s.submit(req("p", 3), t0 + 30ms);  // e.g. another sweep cell, in flight
  EXPECT_TRUE(s.poll(t0 + 60ms).start.empty());
  auto done = s.finish(started.start[0].call_id, answer(1), t0 + 100ms);
  ASSERT_EQ(done.deliver.size(), 2u);
  EXPECT_EQ(done.deliver[0].ticket, a);
  EXPECT_TRUE(done.deliver[0].paid);
  EXPECT_EQ(done.deliver[1].ticket, b);
  EXPECT_FALSE(done.deliver[1].paid);
  EXPECT_EQ(done.deliver[1].usage.prompt_tokens, 0);
  EXPECT_EQ(done.deliver[0].completion.text, done.deliver[1].completion.text);
  EXPECT_EQ(s.stats().calls_started, 1);
}

TEST(CallSchedulerTest, GroupsStartInArrivalOrder) {
  auto o = options();
  o.max_concurrent = 1;
  CallScheduler s(o, t0);
  s.submit(req("b", 0), t0);
  s.submit(req("a", 0), t0 + 1ms);
  auto first = s.poll(t0 + 30ms);
  ASSERT_EQ(first.start.size(), 1u);
  EXPECT_EQ(first.start[0].call.request.user_prompt, "b");
  s.finish(first.start[0].call_id, answer(1), t0 + 40ms);
  auto second = s.poll(t0 + 40ms);
  ASSERT_EQ(second.start.size(), 1u);
  EXPECT_EQ(second.start[0].call.request.user_prompt, "a");
}

TEST(CallSchedulerTest, ConcurrencyCapHoldsCallsBack) {
  auto o = options();
  o.max_concurrent = 2;
  CallScheduler s(o, t0);
  for (int i = 0; i < 5; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  auto step = s.poll(t0 + 20ms);
  EXPECT_EQ(step.start.size(), 2u);
  EXPECT_EQ(s.stats().in_flight, 2);
  EXPECT_FALSE(s.next_wakeup());  // only a finishing call can make room
  s.finish(step.start[0].call_id, answer(1), t0 + 50ms);
  EXPECT_EQ(s.poll(t0 + 50ms).start.size(), 1u);
}

TEST(CallSchedulerTest, RequestsPerMinuteBucketSpacesCallStarts) {
  auto o = options();
  o.requests_per_minute = 3;  // capacity 1, refill 2 per 60 s
  o.max_concurrent = 100;
  CallScheduler s(o, t0);
  for (int i = 0; i < 4; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  EXPECT_EQ(s.poll(t0 + 20ms).start.size(), 1u);
  ASSERT_TRUE(s.next_wakeup());
  EXPECT_EQ(*s.next_wakeup(), t0 + 30s + 20ms);
  EXPECT_TRUE(s.poll(t0 + 30s).start.empty());
  EXPECT_EQ(s.poll(t0 + 30s + 20ms).start.size(), 1u);
  EXPECT_EQ(s.poll(t0 + 60s + 20ms).start.size(), 1u);
  // Three starts within 60 s: the limit, never more.
  EXPECT_TRUE(s.poll(t0 + 60s + 40ms).start.empty());
}

TEST(CallSchedulerTest, TokensPerMinuteChargesTheEstimateAndRefundsTheRest) {
  auto o = options();
  o.tokens_per_minute = 6000;  // capacity 100 tokens, ~98.3/s
  o.max_output_tokens = 1000;
  o.max_concurrent = 100;
  CallScheduler s(o, t0);
  s.submit(req("p", 0), t0);
  s.submit(req("q", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);  // the first overdraws the full bucket by ~900 tokens
  EXPECT_TRUE(s.next_wakeup());
  // Without a refund the debt of ~900 tokens would take ~9 s to refill. The call used 15
  // tokens, not 1000, so the bucket is nearly full again at once.
  s.finish(step.start[0].call_id, answer(1, 10, 5), t0 + 30ms);
  EXPECT_TRUE(s.poll(t0 + 30ms).start.empty());
  ASSERT_TRUE(s.next_wakeup());
  EXPECT_LT(*s.next_wakeup(), t0 + 300ms);
  EXPECT_EQ(s.poll(*s.next_wakeup()).start.size(), 1u);
}

TEST(CallSchedulerTest, RateLimitedCallWaitsForRetryAfterAndPausesOthers) {
  CallScheduler s(options(), t0);
  s.submit(req("p", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  auto done = s.finish(step.start[0].call_id, failure(Errc::resource_exhausted, 5s), t0 + 100ms);
  EXPECT_TRUE(done.fail.empty());
  s.submit(req("q", 0), t0 + 200ms);  // another prompt: held back by the pause too
  EXPECT_TRUE(s.poll(t0 + 5s).start.empty());
  EXPECT_EQ(*s.next_wakeup(), t0 + 5s + 100ms);
  auto retry = s.poll(t0 + 5s + 100ms);
  EXPECT_EQ(retry.start.size(), 2u);
  EXPECT_EQ(s.stats().retries, 1);
}

TEST(CallSchedulerTest, ServerErrorsAreRetriedThenGiveUpWithTheError) {
  auto o = options();
  o.retry.max_attempts = 3;
  CallScheduler s(o, t0);
  const uint64_t ticket = s.submit(req("p", 0), t0);
  TimePoint now = t0 + 20ms;
  CallScheduler::Step last;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto step = s.poll(now);
    ASSERT_EQ(step.start.size(), 1u) << "attempt " << attempt;
    last = s.finish(step.start[0].call_id, failure(Errc::unavailable), now);
    now += 2s;  // beyond any backoff of this policy
  }
  ASSERT_EQ(last.fail.size(), 1u);
  EXPECT_EQ(last.fail[0].ticket, ticket);
  EXPECT_EQ(last.fail[0].error.code(), Errc::unavailable);
  EXPECT_NE(std::string(last.fail[0].error.what()).find("gave up after 3 attempts"),
            std::string::npos);
  EXPECT_TRUE(s.poll(now).empty());
}

TEST(CallSchedulerTest, BadRequestFailsOnlyItsCall) {
  CallScheduler s(options(), t0);
  s.submit(req("p", 0), t0);
  s.submit(req("q", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 2u);
  auto done = s.finish(step.start[0].call_id, failure(Errc::invalid_argument), t0 + 50ms);
  ASSERT_EQ(done.fail.size(), 1u);
  EXPECT_EQ(done.fail[0].error.code(), Errc::invalid_argument);
  EXPECT_EQ(s.stats().retries, 0);
  s.submit(req("r", 0), t0 + 60ms);
  EXPECT_EQ(s.poll(t0 + 80ms).start.size(), 1u);  // others still go
}

TEST(CallSchedulerTest, RefusedKeyFailsEverythingAtOnce) {
  auto o = options();
  o.max_concurrent = 1;
  CallScheduler s(o, t0);
  s.submit(req("p", 0), t0);
  s.submit(req("q", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  auto done = s.finish(step.start[0].call_id, failure(Errc::unauthenticated), t0 + 50ms);
  EXPECT_EQ(done.fail.size(), 2u);  // its own sample and the queued one
  s.submit(req("r", 0), t0 + 60ms);
  auto later = s.poll(t0 + 80ms);
  EXPECT_TRUE(later.start.empty());
  ASSERT_EQ(later.fail.size(), 1u);
  EXPECT_EQ(later.fail[0].error.code(), Errc::unauthenticated);
}

TEST(CallSchedulerTest, FewerAnswersThanAskedQueuesTheRestAgain) {
  CallScheduler s(options(), t0);
  for (int i = 0; i < 3; ++i) s.submit(req("p", i), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  auto done = s.finish(step.start[0].call_id, answer(2), t0 + 50ms);
  ASSERT_EQ(done.deliver.size(), 2u);
  EXPECT_EQ(done.deliver[0].sample_index, 0);
  EXPECT_EQ(done.deliver[1].sample_index, 1);
  auto again = s.poll(t0 + 100ms);
  ASSERT_EQ(again.start.size(), 1u);
  EXPECT_EQ(again.start[0].call.sample_indices, (std::vector<int>{2}));
}

TEST(CallSchedulerTest, UsageSharesSumToTheCallsTotals) {
  auto o = options();
  o.cost = [](const Usage& u) { return 1e-6 * static_cast<double>(u.prompt_tokens + u.output_tokens()); };
  CallScheduler s(o, t0);
  for (int i = 0; i < 3; ++i) s.submit(req("p", i), t0);
  auto step = s.poll(t0 + 20ms);
  CallResult r = *answer(3).result;
  r.usage.prompt_tokens = 100;
  r.usage.completion_tokens = 301;
  r.usage.thinking_tokens = 7;
  auto done = s.finish(step.start[0].call_id, {r, std::nullopt}, t0 + 50ms);
  ASSERT_EQ(done.deliver.size(), 3u);
  Usage sum;
  double cost = 0;
  for (auto& d : done.deliver) {
    sum += d.usage;
    cost += d.cost_usd;
    EXPECT_EQ(d.samples_in_call, 3);
    EXPECT_EQ(d.call.usage.prompt_tokens, 100);
  }
  EXPECT_EQ(sum.prompt_tokens, 100);
  EXPECT_EQ(sum.completion_tokens, 301);
  EXPECT_EQ(sum.thinking_tokens, 7);
  EXPECT_NEAR(cost, 408e-6, 1e-12);
}

SchedulerOptions capped(double cap) {
  auto o = options();
  o.max_samples_per_call = 1;
  o.max_concurrent = 10;
  o.max_output_tokens = 1000;
  // $1 per 1000 tokens: a call's worst case is a little over $1.
  o.cost = [](const Usage& u) { return static_cast<double>(u.prompt_tokens + u.output_tokens()) / 1000.0; };
  o.max_usd = cap;
  return o;
}

TEST(CallSchedulerTest, DollarCapCountsInFlightWorstCases) {
  CallScheduler s(capped(2.5), t0);
  for (int i = 0; i < 4; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 2u);  // a third worst case would pass $2.5
  EXPECT_FALSE(s.stopped());
  EXPECT_GT(s.spend().in_flight(), 2.0);
  // The first call costs $0.1: room for one more worst case.
  s.finish(step.start[0].call_id, answer(1, 50, 50), t0 + 50ms);
  EXPECT_EQ(s.poll(t0 + 50ms).start.size(), 1u);
}

TEST(CallSchedulerTest, DollarCapStopsIssuingAndDrains) {
  CallScheduler s(capped(1.5), t0);
  const uint64_t a = s.submit(req("p0", 0), t0);
  const uint64_t b = s.submit(req("p1", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_TRUE(s.poll(t0 + 30ms).empty());  // waits: the running call may cost less
  auto done = s.finish(step.start[0].call_id, answer(1, 100, 800), t0 + 100ms);  // $0.9
  ASSERT_EQ(done.deliver.size(), 1u);
  EXPECT_EQ(done.deliver[0].ticket, a);
  auto stop = s.poll(t0 + 100ms);  // $0.9 + a worst case of ~$1.0 > $1.5, nothing running
  EXPECT_TRUE(stop.start.empty());
  ASSERT_EQ(stop.fail.size(), 1u);
  EXPECT_EQ(stop.fail[0].ticket, b);
  EXPECT_EQ(stop.fail[0].error.code(), Errc::out_of_range);
  ASSERT_TRUE(s.stopped());
  EXPECT_NE(s.stopped()->find("dollar cap reached"), std::string::npos);
  EXPECT_LE(s.spend().realised(), 1.5);
  s.submit(req("p2", 0), t0 + 200ms);
  EXPECT_EQ(s.poll(t0 + 200ms).fail.size(), 1u);  // and stays stopped
}

// -- spend rate, total deadline, learned concurrency ----------------------------------------

// $1 per 1,000 tokens; worst case of a call = (prompt + 1000 output) tokens.
SchedulerOptions windowed(double usd_per_window, std::chrono::milliseconds window) {
  SchedulerOptions o = options();
  o.max_samples_per_call = 1;
  o.max_concurrent = 64;
  o.cost = [](const Usage& u) {
    return static_cast<double>(u.prompt_tokens + u.output_tokens()) / 1000.0;
  };
  o.max_usd_per_window = usd_per_window;
  o.spend_window = window;
  return o;
}

TEST(CallSchedulerTest, NoSpendWindowEverHoldsMoreThanTheLimit) {
  // 40 calls, each worst case ~$1.001 and real cost $0.6; $3 per 10 s.
  CallScheduler s(windowed(3.0, 10s), t0);
  for (int i = 0; i < 40; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  std::vector<std::pair<TimePoint, double>> started;  // start time, real cost
  std::vector<std::pair<uint64_t, TimePoint>> running;
  TimePoint now = t0;
  int answered = 0;
  while (answered < 40) {
    auto step = s.poll(now);
    ASSERT_TRUE(step.fail.empty());
    for (auto& st : step.start) running.push_back({st.call_id, now + 2s});  // 2 s latency
    // Advance to the next event: a call's end or the scheduler's wakeup.
    std::optional<TimePoint> next = s.next_wakeup();
    for (auto& r : running) next = next ? std::min(*next, r.second) : r.second;
    ASSERT_TRUE(next) << "stalled with " << answered << " answered";
    now = std::max(now, *next);
    for (auto it = running.begin(); it != running.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      started.push_back({it->second - 2s, 0.6});
      s.finish(it->first, answer(1, 100, 500), now);  // $0.6
      ++answered;
      it = running.erase(it);
    }
  }
  // Every window [a, a + 10 s) whose start is a call's start holds at most $3 of calls.
  for (auto& [a, _] : started) {
    double sum = 0;
    for (auto& [t, c] : started)
      if (t >= a && t < a + 10s) sum += c;
    EXPECT_LE(sum, 3.0 + 1e-9);
  }
  EXPECT_GT(s.stats().spend_window_waits, 0);
  // Four calls a window: after three settle at $0.6, a fourth worst case ($1.0) still fits,
  // a fifth does not. A charge is held a window past its answer (2 s after its start), so a
  // round takes 12 s: 40 calls in just under 120 s; a stall would take longer.
  EXPECT_LE(now - t0, 120s);
}

TEST(CallSchedulerTest, NoServerWindowHoldsMoreThanTheLimitWhereverItSeesACallArrive) {
  // A server charges a call at its own arrival, anywhere between our start and our answer.
  // Latencies of 0.5-4.5 s; the server sees each call arrive early, late or in the middle.
  CallScheduler s(windowed(3.0, 10s), t0);
  for (int i = 0; i < 40; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  struct Seen {
    TimePoint start, end;
  };
  std::vector<Seen> calls;
  std::vector<std::pair<uint64_t, Seen>> running;
  TimePoint now = t0;
  int answered = 0, k = 0;
  while (answered < 40) {
    auto step = s.poll(now);
    ASSERT_TRUE(step.fail.empty());
    for (auto& st : step.start) {
      const auto latency = std::chrono::milliseconds(500 + (k++ * 1237) % 4000);
      running.push_back({st.call_id, {now, now + latency}});
    }
    std::optional<TimePoint> next = s.next_wakeup();
    for (auto& r : running) next = next ? std::min(*next, r.second.end) : r.second.end;
    ASSERT_TRUE(next) << "stalled with " << answered << " answered";
    now = std::max(now, *next);
    for (auto it = running.begin(); it != running.end();) {
      if (it->second.end > now) {
        ++it;
        continue;
      }
      calls.push_back(it->second);
      s.finish(it->first, answer(1, 100, 500), now);  // $0.6
      ++answered;
      it = running.erase(it);
    }
  }
  for (int where = 0; where < 3; ++where) {  // arrival at the start, at the answer, or between
    std::vector<TimePoint> arrival;
    for (size_t i = 0; i < calls.size(); ++i) {
      // A server answers after it sees the request: its arrival is a moment before our answer.
      const auto span = calls[i].end - 1ms - calls[i].start;
      arrival.push_back(where == 0   ? calls[i].start
                        : where == 1 ? calls[i].end - 1ms
                                     : calls[i].start + span * static_cast<int>(i % 3) / 2);
    }
    // The server's check as the fake server makes it: at a call's arrival, the calls that
    // arrived within the window before it hold their real cost once answered and their
    // worst case (at least $1) until then; with its own worst case they stay within $3.
    for (size_t k = 0; k < calls.size(); ++k) {
      double held = 1.0;
      for (size_t j = 0; j < calls.size(); ++j) {
        if (j == k || arrival[j] > arrival[k] || arrival[j] <= arrival[k] - 10s) continue;
        held += calls[j].end <= arrival[k] ? 0.6 : 1.0;
      }
      EXPECT_LE(held, 3.0 + 1e-9) << "call " << k << ", arrivals at "
                                  << (where == 0 ? "start" : where == 1 ? "answer" : "mixed");
    }
  }
}

TEST(CallSchedulerTest, ACallDearerThanTheWholeWindowFailsByName) {
  CallScheduler s(windowed(0.5, 10s), t0);  // a worst case of ~$1 can never fit
  const uint64_t t = s.submit(req("p", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.fail.size(), 1u);
  EXPECT_EQ(step.fail[0].ticket, t);
  EXPECT_EQ(step.fail[0].error.code(), Errc::out_of_range);
  EXPECT_NE(std::string(step.fail[0].error.what()).find("llm.max_usd_per_window"),
            std::string::npos);
}

TEST(CallSchedulerTest, TheTotalDeadlineCutsAttemptsAndFailsByName) {
  SchedulerOptions o = options();
  o.max_samples_per_call = 1;
  o.call_deadline = 10s;
  o.retry.base_delay = 1s;
  o.retry.max_delay = 1s;
  o.retry.max_attempts = 100;
  CallScheduler s(o, t0);
  const uint64_t t = s.submit(req("p", 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 1u);
  ASSERT_TRUE(step.start[0].call.time_left);
  EXPECT_EQ(*step.start[0].call.time_left, 10s);  // the first attempt may use it all
  // A hung server: the attempt times out at 6 s; the retry gets only what is left.
  auto after = s.finish(step.start[0].call_id, failure(Errc::deadline_exceeded), t0 + 6s);
  EXPECT_TRUE(after.fail.empty());
  TimePoint now = t0 + 6s;
  std::vector<CallScheduler::Failure> failed;
  for (int i = 0; i < 20 && failed.empty(); ++i) {
    for (auto& f : s.poll(now).fail) failed.push_back(f);  // sets the next wakeup
    if (!failed.empty()) break;
    ASSERT_TRUE(s.next_wakeup());
    now = *s.next_wakeup();
    auto p = s.poll(now);
    for (auto& f : p.fail) failed.push_back(f);
    for (auto& st : p.start) {
      ASSERT_TRUE(st.call.time_left);
      EXPECT_LE(now + *st.call.time_left, t0 + 10s + 20ms);
      now += *st.call.time_left;  // hangs until its cut timeout
      auto f = s.finish(st.call_id, failure(Errc::deadline_exceeded), now);
      for (auto& x : f.fail) failed.push_back(x);
    }
  }
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].ticket, t);
  EXPECT_EQ(failed[0].error.code(), Errc::deadline_exceeded);
  EXPECT_NE(std::string(failed[0].error.what()).find("call_deadline"), std::string::npos);
  EXPECT_LE(now, t0 + 10s + 20ms);
  EXPECT_EQ(s.stats().deadline_failures, 1);
}

// Split mode (llm.batch_roles / llm.online_methods): the online calls keep the concurrency cap
// and the total deadline; the job calls, which a provider may hold for hours, neither take
// the online slots nor fail at the online deadline.
ChatRequest split_req(const std::string& prompt, const std::string& method) {
  ChatRequest r = req(prompt, 0);
  r.method = method;
  return r;
}

SchedulerOptions split_options() {
  SchedulerOptions o = options();
  o.max_samples_per_call = 1;
  o.max_concurrent = 2;
  o.call_deadline = 10s;
  o.retry.base_delay = 1s;
  o.retry.max_delay = 1s;
  o.retry.max_attempts = 100;
  o.in_job = [](const ChatRequest& r) { return r.method != "iterative"; };
  return o;
}

TEST(CallSchedulerSplit, OnlineCallsKeepTheCapWhileJobCallsFillNoSlot) {
  CallScheduler s(split_options(), t0);
  for (int i = 0; i < 5; ++i) s.submit(split_req("job" + std::to_string(i), "beam"), t0);
  for (int i = 0; i < 3; ++i) s.submit(split_req("chain" + std::to_string(i), "iterative"), t0);
  auto step = s.poll(t0 + 20ms);
  int online = 0, jobs = 0;
  for (const auto& st : step.start) {
    if (st.call.request.method == "iterative") {
      online++;
      ASSERT_TRUE(st.call.time_left) << "an online call carries its deadline";
      EXPECT_EQ(*st.call.time_left, 10s);
    } else {
      jobs++;
      EXPECT_FALSE(st.call.time_left) << "a job call has no online deadline";
    }
  }
  EXPECT_EQ(jobs, 5);    // none waits for a slot, though they came first
  EXPECT_EQ(online, 2);  // the cap, not the cap minus the five jobs in flight
  EXPECT_EQ(s.stats().holding, "concurrency");
  EXPECT_EQ(s.stats().in_flight, 7);
  // With all five jobs still running, one online answer frees a slot for the third.
  uint64_t first_online = 0;
  for (const auto& st : step.start)
    if (st.call.request.method == "iterative") first_online = st.call_id;
  s.finish(first_online, answer(1), t0 + 1s);
  auto next = s.poll(t0 + 1s);
  ASSERT_EQ(next.start.size(), 1u);
  EXPECT_EQ(next.start[0].call.request.method, "iterative");
}

TEST(CallSchedulerSplit, AHungOnlineCallFailsAtItsDeadlineAndAJobCallOutlivesIt) {
  CallScheduler s(split_options(), t0);
  const uint64_t chain = s.submit(split_req("chain", "iterative"), t0);
  const uint64_t job = s.submit(split_req("job", "beam"), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 2u);
  uint64_t online_call = 0, job_call = 0;
  for (const auto& st : step.start)
    (st.call.request.method == "iterative" ? online_call : job_call) = st.call_id;
  // The online attempt hangs until its timeout, cut to the deadline: no retry fits after it.
  auto after = s.finish(online_call, failure(Errc::deadline_exceeded), t0 + 10s + 20ms);
  ASSERT_EQ(after.fail.size(), 1u);
  EXPECT_EQ(after.fail[0].ticket, chain);
  EXPECT_NE(std::string(after.fail[0].error.what()).find("call_deadline"), std::string::npos);
  // The job comes back failed an hour later (the provider's job expired): it is retried,
  // not failed by a deadline that is not its own.
  auto later = s.finish(job_call, failure(Errc::unavailable), t0 + 1h);
  EXPECT_TRUE(later.fail.empty());
  auto retry = s.poll(t0 + 1h + 2s);
  ASSERT_EQ(retry.start.size(), 1u);
  EXPECT_EQ(retry.start[0].call.request.method, "beam");
  auto done = s.finish(retry.start[0].call_id, answer(1), t0 + 2h);
  ASSERT_EQ(done.deliver.size(), 1u);
  EXPECT_EQ(done.deliver[0].ticket, job);
  EXPECT_EQ(s.stats().deadline_failures, 1);
}

TEST(CallSchedulerTest, RepeatedRateLimitsHalveConcurrencyThenSuccessesRestoreIt) {
  SchedulerOptions o = options();
  o.max_samples_per_call = 1;
  o.max_concurrent = 8;
  CallScheduler s(o, t0);
  for (int i = 0; i < 64; ++i) s.submit(req("p" + std::to_string(i), 0), t0);
  auto step = s.poll(t0 + 20ms);
  ASSERT_EQ(step.start.size(), 8u);
  // All eight come back 429 at once: one halving, not eight.
  for (auto& st : step.start) s.finish(st.call_id, failure(Errc::resource_exhausted, 1s), t0 + 50ms);
  EXPECT_DOUBLE_EQ(s.stats().concurrency_window, 4.0);
  EXPECT_EQ(s.stats().rate_limited, 8);
  auto again = s.poll(t0 + 2s);
  EXPECT_EQ(again.start.size(), 4u);  // the learned limit, not the configured 8
  for (auto& st : again.start) s.finish(st.call_id, failure(Errc::resource_exhausted, 1s), t0 + 2s + 50ms);
  EXPECT_DOUBLE_EQ(s.stats().concurrency_window, 2.0);
  // Successes creep back up: +1/window each.
  TimePoint now = t0 + 5s;
  for (int round = 0; round < 40; ++round) {
    auto p = s.poll(now);
    for (auto& st : p.start) s.finish(st.call_id, answer(1), now);
    now += 100ms;
  }
  EXPECT_GT(s.stats().concurrency_window, 4.0);
  EXPECT_LE(s.stats().concurrency_window, 8.0);
}

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

TEST(CallSchedulerHolding, NamesTheLimitTheOldestWaitingCallWaitsOn) {
  SchedulerOptions o = options();
  o.max_samples_per_call = 1;
  o.max_concurrent = 1;
  CallScheduler s(o, t0);
  s.submit(req("a", 0), t0);
  s.submit(req("b", 0), t0);
  EXPECT_EQ(s.poll(t0 + 20ms).start.size(), 1u);
  EXPECT_EQ(s.stats().holding, "concurrency");  // b waits for a's slot

  SchedulerOptions r = options();
  r.requests_per_minute = 60;  // one call a second
  CallScheduler rpm(r, t0);
  for (const char* p : {"a", "b"}) rpm.submit(req(p, 0), t0);
  EXPECT_EQ(rpm.poll(t0 + 20ms).start.size(), 1u);
  EXPECT_EQ(rpm.stats().holding, "requests/min");

  SchedulerOptions w = options();
  w.cost = [](const Usage& u) { return static_cast<double>(u.prompt_tokens + u.output_tokens()) / 1000.0; };
  w.max_usd_per_window = 1.5;  // one call's worst case (~1 $) fits, two do not
  CallScheduler spend(w, t0);
  for (const char* p : {"a", "b"}) spend.submit(req(p, 0), t0);
  EXPECT_EQ(spend.poll(t0 + 20ms).start.size(), 1u);
  EXPECT_EQ(spend.stats().holding, "spend window");

  CallScheduler idle(options(), t0);
  idle.submit(req("a", 0), t0);
  idle.poll(t0);  // still coalescing: no limit holds it
  EXPECT_EQ(idle.stats().holding, "");
}

}  // namespace
}  // namespace palladium
