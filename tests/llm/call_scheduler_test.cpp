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

}  // namespace
}  // namespace palladium
