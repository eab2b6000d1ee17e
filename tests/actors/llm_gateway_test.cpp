// The llm_gateway actor. Its own policy on the deterministic fixture, with a ScriptedRunner for
// the provider and the fixture's clock (no network, no sleeps): many calls in flight under the
// concurrency cap, coalescing into one call of n samples, identical requests sharing one
// answer, retries that honour Retry-After, immediate failure on 400, errors keeping their
// Errc across the actor boundary, and the store's request timeout. Against
// tests/llm/fake_llm_server.py over real loopback HTTP: what needs a real provider and store
// (Gemini's candidate count, a refused key, the per-call timeout, truncated and malformed
// answers, the cache as the record, the spend governor), with the server's log as the witness.
// The policy's exact rules (token buckets, backoff, the dollar cap) are tested on an injected
// clock in tests/llm/call_scheduler_test.cpp.
#include "actors/llm_gateway.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <future>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "llm/curl_transport.hpp"
#include "llm/gemini_provider.hpp"
#include "llm/openai_provider.hpp"
#include "store/run_store.hpp"
#include "store/sqlite.hpp"
#include "tests/actors/deterministic_fixture.hpp"
#include "tests/actors/scripted_runner.hpp"
#include "tests/llm/fake_llm_server.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kKey = "sk-gateway-test-secret-9f8e7d";

struct Answer {
  std::optional<ChatResponse> response;
  caf::error error;
};

class LlmGatewayTest : public ::testing::Test {
 protected:
  LlmGatewayTest() : server_({"--api-key", kKey}) {
    register_error_category(config_);
    system_ = std::make_unique<caf::actor_system>(config_);
    transport_ = make_curl_transport();
  }
  ~LlmGatewayTest() override {
    for (auto& g : gateways_) caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
    if (store_) caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
    system_->await_all_actors_done();
    // Handles keep their actors (and a detached actor's thread) alive: drop them before the
    // system goes.
    gateways_.clear();
    store_ = StoreActor{};
  }

  HttpProviderConfig provider_config(const std::string& base, const std::string& key = kKey) {
    HttpProviderConfig c;
    c.model = "test-model";
    c.base_url = base;
    c.api_key = key;
    c.sampling.max_output_tokens = 256;
    c.timeout = 10s;
    return c;
  }

  LlmGatewayActor gateway(HttpProviderConfig c, SchedulerOptions so, bool gemini = false,
                     StoreActor store = {}, bool use_cache = true) {
    std::shared_ptr<HttpProvider> p =
        gemini ? make_gemini_provider(std::move(c)) : make_openai_provider(std::move(c));
    LlmGatewayOptions o;
    o.scheduler = std::move(so);
    o.use_cache = use_cache;
    auto g = spawn_llm_gateway(*system_, std::shared_ptr<CallRunner>(make_http_runner(p, transport_)),
                               o, store);
    gateways_.push_back(g);
    return g;
  }

  static SchedulerOptions fast_retries() {
    SchedulerOptions so;
    so.max_concurrent = 4;
    so.coalesce_window = 0ms;
    so.retry.max_attempts = 3;
    so.retry.base_delay = 5ms;
    so.retry.max_delay = 20ms;
    return so;
  }

  static ChatRequest request(int sample_index = 0, const std::string& prompt = "make it fast") {
    ChatRequest r;
    r.workload_id = "8p";
    r.sample_index = sample_index;
    r.seed = 1;
    r.system_prompt = "You write Pallas kernels.";
    r.user_prompt = "## Workload 8p\n" + prompt;
    return r;
  }

  // Sends every request at once (one asker actor each) and waits for every answer.
  std::vector<Answer> ask_all(const LlmGatewayActor& g, const std::vector<ChatRequest>& requests) {
    std::vector<std::shared_ptr<std::promise<Answer>>> promises;
    std::vector<std::future<Answer>> futures;
    std::vector<caf::actor> askers;
    for (const auto& r : requests) {
      auto p = std::make_shared<std::promise<Answer>>();
      futures.push_back(p->get_future());
      system_->spawn([g, r, p](caf::event_based_actor* self) {
        self->request(g, caf::infinite, generate_atom::value, r)
            .then([p](ChatResponse& resp) { p->set_value(Answer{std::move(resp), {}}); },
                  [p](caf::error& e) { p->set_value(Answer{std::nullopt, e}); });
      });
    }
    std::vector<Answer> out;
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }

  Answer ask_one(const LlmGatewayActor& g, const ChatRequest& r) { return ask_all(g, {r}).front(); }

  LlmGatewayStats stats(const LlmGatewayActor& g) {
    caf::scoped_actor self{*system_};
    LlmGatewayStats s;
    self->request(g, caf::infinite, stats_atom::value)
        .receive([&](LlmGatewayStats& got) { s = got; }, [](caf::error&) {});
    return s;
  }

  // A store actor over a fresh database file, with one run to own the calls.
  StoreActor store() {
    auto rs = RunStore::open(db_.path());
    run_id_ = rs->begin_or_resume_run("gateway_test", "cfg");
    store_ = spawn_store(*system_, std::move(rs));
    return store_;
  }
  ChatRequest run_request(int sample_index = 0, const std::string& prompt = "make it fast") {
    ChatRequest r = request(sample_index, prompt);
    r.run_id = run_id_;
    return r;
  }
  std::string sql(const std::string& query) {
    sqlite::Db db(db_.path(), sqlite::Db::Mode::read_only);
    return db.query_text(query);
  }

  TempDb db_;
  StoreActor store_;
  int64_t run_id_ = 0;
  testing::FakeLlmServer server_;
  caf::actor_system_config config_;
  std::unique_ptr<caf::actor_system> system_;
  std::shared_ptr<HttpTransport> transport_;
  std::vector<LlmGatewayActor> gateways_;
};

TEST_F(LlmGatewayTest, GeminiCoalescesIntoCandidateCount) {
  SchedulerOptions so = fast_retries();
  so.max_samples_per_call = 2;
  so.coalesce_window = 5s;
  auto g = gateway(provider_config(server_.gemini_base_url()), so, /*gemini=*/true);
  auto answers = ask_all(g, {request(0), request(1)});
  for (auto& a : answers) ASSERT_TRUE(a.response) << to_string(a.error);
  json log = server_.log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["api"], "gemini");
  EXPECT_EQ(log[0]["n"], 2);
  EXPECT_GT(answers[0].response->thinking_tokens + answers[1].response->thinking_tokens, 0);
}

TEST_F(LlmGatewayTest, BadKeyFailsAtOnceNamingProviderAndStatus) {
  auto g = gateway(provider_config(server_.openai_base_url(), "sk-wrong-key-000"), fast_retries());
  auto answers = ask_all(g, {request(0, "a"), request(0, "b")});
  for (auto& a : answers) {
    ASSERT_FALSE(a.response);
    EXPECT_EQ(errc_of(a.error), Errc::unauthenticated);
    const std::string msg = error_message(a.error);
    EXPECT_NE(msg.find("openai"), std::string::npos) << msg;
    EXPECT_NE(msg.find("401"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("sk-wrong-key"), std::string::npos) << msg;
  }
  // No retry, and after the 401 nothing more is sent with the refused key.
  EXPECT_LE(server_.log().size(), 2u);
  Answer later = ask_one(g, request(0, "c"));
  EXPECT_EQ(errc_of(later.error), Errc::unauthenticated);
  EXPECT_LE(server_.log().size(), 2u);
}

TEST_F(LlmGatewayTest, SlowCallHitsThePerCallTimeout) {
  server_.faults({"slow:3000"});
  auto c = provider_config(server_.openai_base_url());
  c.timeout = 300ms;
  SchedulerOptions so = fast_retries();
  so.retry.max_attempts = 1;
  auto g = gateway(c, so);
  Answer a = ask_one(g, request());
  ASSERT_FALSE(a.response);
  EXPECT_EQ(errc_of(a.error), Errc::deadline_exceeded) << to_string(a.error);
}

TEST_F(LlmGatewayTest, TruncatedAnswerIsDeliveredAndMarked) {
  server_.faults({"length"});
  auto g = gateway(provider_config(server_.openai_base_url()), fast_retries());
  Answer a = ask_one(g, request());
  ASSERT_TRUE(a.response) << to_string(a.error);
  EXPECT_TRUE(a.response->truncated);
  EXPECT_EQ(a.response->finish_reason, "length");
  EXPECT_EQ(server_.log().size(), 1u);  // a truncated answer is an answer: not retried
}

TEST_F(LlmGatewayTest, MalformedAndDroppedAnswersAreRetried) {
  server_.faults({"malformed", "drop", "truncated"});
  SchedulerOptions so = fast_retries();
  so.retry.max_attempts = 4;
  auto g = gateway(provider_config(server_.openai_base_url()), so);
  Answer a = ask_one(g, request());
  ASSERT_TRUE(a.response) << to_string(a.error);
  EXPECT_EQ(server_.log().size(), 4u);
}

// -- the gateway's own policy, on the deterministic fixture -----------------------------------
// A ScriptedRunner stands for the provider: the test sees every call the gateway starts and
// ends each when it chooses, and time moves only when the test advances it (the scheduler's
// clock is the fixture's), so the caps, coalescing, backoff and Retry-After waits are exact.

ChatRequest prompt(int sample_index, const std::string& text) {
  ChatRequest r;
  r.workload_id = "8p";
  r.sample_index = sample_index;
  r.seed = 1;
  r.system_prompt = "You write Pallas kernels.";
  r.user_prompt = text;
  return r;
}

class GatewayActorTest : public testing::DeterministicFixture {
 protected:
  static SchedulerOptions fast_retries() {
    SchedulerOptions so;
    so.max_concurrent = 4;
    so.coalesce_window = 0ms;
    so.retry.max_attempts = 3;
    so.retry.base_delay = 5ms;
    so.retry.max_delay = 20ms;
    return so;
  }
  LlmGatewayActor spawn(SchedulerOptions so, StoreActor store = {}, RequestTimeouts t = {}) {
    LlmGatewayOptions o;
    o.scheduler = std::move(so);
    o.clock = [this] { return now(); };
    o.detached = false;  // on the fixture's scheduler
    o.timeouts = t;
    runner = std::make_shared<testing::ScriptedRunner>();
    auto g = track(spawn_llm_gateway(sys, runner, o, std::move(store)));
    run();
    return g;
  }
  std::shared_ptr<Reply<ChatResponse>> generate(const LlmGatewayActor& g, const ChatRequest& r) {
    return ask<ChatResponse>(g, generate_atom::value, r);
  }
  // Fails the next `n` attempts with a retryable `what`, each after the one before it started
  // again (the backoff passed).
  void fail_attempts(size_t n, const std::string& what) {
    for (size_t i = 0; i < n; ++i) {
      const size_t call = runner->started.size() - 1;
      runner->fail(call, ProviderError(Errc::unavailable, what));
      advance(40ms, 5ms);  // past the longest backoff
    }
  }
  LlmGatewayStats stats(const LlmGatewayActor& g) {
    auto reply = ask<LlmGatewayStats>(g, stats_atom::value);
    run();
    EXPECT_TRUE(reply->value);
    return reply->value.value_or(LlmGatewayStats{});
  }
  std::shared_ptr<testing::ScriptedRunner> runner;
};

TEST_F(GatewayActorTest, ManyCallsInFlightButNeverMoreThanTheCap) {
  SchedulerOptions so = fast_retries();
  so.max_concurrent = 2;
  auto g = spawn(so);
  std::vector<std::shared_ptr<Reply<ChatResponse>>> replies;
  for (int i = 0; i < 6; ++i)
    replies.push_back(generate(g, prompt(0, "prompt " + std::to_string(i))));
  run();
  EXPECT_EQ(runner->started.size(), 2u) << "two start together: several in flight";
  // Each call that ends lets the next one start, and only then.
  for (size_t i = 0; i < 6; ++i) {
    runner->answer(i);
    run();
    EXPECT_EQ(runner->started.size(), std::min<size_t>(6, i + 3)) << "after call " << i;
  }
  EXPECT_EQ(runner->max_in_flight, 2);
  for (auto& r : replies) ASSERT_TRUE(r->value) << to_string(r->error);
}

TEST_F(GatewayActorTest, SamplesOfOnePromptGoOutAsOneCallOfN) {
  SchedulerOptions so = fast_retries();
  so.max_samples_per_call = 4;
  so.coalesce_window = 5s;  // the group goes as soon as it is full
  auto g = spawn(so);
  std::vector<std::shared_ptr<Reply<ChatResponse>>> replies;
  for (int i = 0; i < 4; ++i) replies.push_back(generate(g, prompt(i, "make it fast")));
  run();
  ASSERT_EQ(runner->started.size(), 1u) << "no waiting for the window: the group is full";
  EXPECT_EQ(runner->started[0].call.sample_indices.size(), 4u);
  runner->answer(0);
  run();
  std::set<std::string> texts;
  for (auto& r : replies) {
    ASSERT_TRUE(r->value) << to_string(r->error);
    texts.insert(r->value->text);
  }
  EXPECT_EQ(texts.size(), 4u) << "four different samples, not one answer copied";
  EXPECT_EQ(stats(g).calls.samples_coalesced, 4);
}

TEST_F(GatewayActorTest, IdenticalRequestsShareOneAnswer) {
  SchedulerOptions so = fast_retries();
  so.coalesce_window = 200ms;
  auto g = spawn(so);
  auto first = generate(g, prompt(0, "make it fast"));
  auto second = generate(g, prompt(0, "make it fast"));
  advance(300ms, 10ms);
  ASSERT_EQ(runner->started.size(), 1u) << "one call for both";
  runner->answer(0);
  run();
  ASSERT_TRUE(first->value && second->value);
  EXPECT_EQ(first->value->text, second->value->text);
  EXPECT_NE(first->value->cached, second->value->cached) << "one paid, one shared";
}

TEST_F(GatewayActorTest, RateLimitedCallWaitsForRetryAfter) {
  auto g = spawn(fast_retries());
  auto reply = generate(g, prompt(0, "make it fast"));
  run();
  ASSERT_EQ(runner->started.size(), 1u);
  runner->fail(0, ProviderError(Errc::resource_exhausted, "scripted: HTTP 429", 1000ms, 429));
  run();
  // Backoff alone would wait at most 20 ms; the provider asked for 1 s.
  advance(990ms, 10ms);
  EXPECT_EQ(runner->started.size(), 1u) << "not before the Retry-After";
  advance(30ms, 10ms);
  ASSERT_EQ(runner->started.size(), 2u) << "and soon after it";
  runner->answer(1);
  run();
  ASSERT_TRUE(reply->value) << to_string(reply->error);
  EXPECT_EQ(stats(g).calls.rate_limited, 1);
}

TEST_F(GatewayActorTest, ServerErrorIsRetriedThenAnswered) {
  auto g = spawn(fast_retries());
  auto reply = generate(g, prompt(0, "make it fast"));
  run();
  ASSERT_EQ(runner->started.size(), 1u);
  fail_attempts(2, "scripted: HTTP 503");
  ASSERT_EQ(runner->started.size(), 3u);
  runner->answer(2);
  run();
  ASSERT_TRUE(reply->value) << to_string(reply->error);
  EXPECT_EQ(stats(g).calls.retries, 2);
}

TEST_F(GatewayActorTest, RetriesSpentIsAnErrorNotAResponse) {
  auto g = spawn(fast_retries());
  auto reply = generate(g, prompt(0, "make it fast"));
  run();
  ASSERT_EQ(runner->started.size(), 1u);
  fail_attempts(3, "scripted: HTTP 500");
  EXPECT_EQ(runner->started.size(), 3u) << "max_attempts calls in all";
  ASSERT_FALSE(reply->value);
  auto code = errc_of(reply->error);
  ASSERT_TRUE(code);
  EXPECT_TRUE(retryable(*code)) << "the retryable bit survives the actor boundary";
  EXPECT_NE(error_message(reply->error).find("HTTP 500"), std::string::npos)
      << error_message(reply->error);
}

TEST_F(GatewayActorTest, BadRequestFailsAtOnceAndOnlyThatCall) {
  auto g = spawn(fast_retries());
  auto bad = generate(g, prompt(0, "a"));
  run();
  runner->fail(0, ProviderError(Errc::invalid_argument, "scripted: HTTP 400", std::nullopt, 400));
  advance(100ms, 10ms);
  EXPECT_EQ(errc_of(bad->error), Errc::invalid_argument);
  EXPECT_NE(error_message(bad->error).find("HTTP 400"), std::string::npos);
  EXPECT_EQ(runner->started.size(), 1u) << "not retried";
  auto next = generate(g, prompt(0, "b"));
  run();
  ASSERT_EQ(runner->started.size(), 2u);
  runner->answer(1);
  run();
  EXPECT_TRUE(next->value) << to_string(next->error);
}

// A store that takes messages and never answers.
caf::behavior black_hole(caf::event_based_actor* self) {
  self->set_default_handler(caf::skip);
  return {[](int) {}};
}

// Request timeouts come from the config (coordinator.timeouts): a cache lookup the store does
// not answer in timeouts.store is given up (the provider is called), and so is the write of
// the answer (it is handed out unrecorded, response_id 0), instead of waiting forever.
TEST_F(GatewayActorTest, AStoreThatNeverAnswersCostsTheStoreTimeoutNotTheRun) {
  RequestTimeouts t;
  t.store = 2s;
  auto store = track(sys.spawn(black_hole));
  auto g = spawn(fast_retries(), caf::actor_cast<StoreActor>(store), t);
  auto reply = generate(g, prompt(0, "make it fast"));
  run();
  advance(1900ms, 100ms);
  EXPECT_TRUE(runner->started.empty()) << "still waiting for the cache lookup";
  advance(200ms, 100ms);
  ASSERT_EQ(runner->started.size(), 1u) << "the lookup timed out: the provider is asked";
  runner->answer(0);
  run();
  EXPECT_FALSE(reply->answered()) << "the answer waits for its record";
  advance(2100ms, 100ms);
  ASSERT_TRUE(reply->value) << to_string(reply->error);
  EXPECT_EQ(reply->value->response_id, 0) << "handed out unrecorded";
}

// -- The cache is the record ------------------------------------------------------------------

TEST_F(LlmGatewayTest, EveryCallAndAnswerIsStoredAndASecondGatewayPaysNothing) {
  auto st = store();
  auto first = gateway(provider_config(server_.openai_base_url()), fast_retries(), false, st);
  Answer a = ask_one(first, run_request());
  ASSERT_TRUE(a.response) << to_string(a.error);
  EXPECT_FALSE(a.response->cached);
  EXPECT_GT(a.response->response_id, 0);
  EXPECT_EQ(sql("SELECT COUNT(*) FROM llm_calls"), "1");
  EXPECT_EQ(sql("SELECT status || ' ' || samples || ' ' || (prompt_tokens > 0) FROM llm_calls"),
            "ok 1 1");
  EXPECT_EQ(sql("SELECT COUNT(*) FROM llm_responses WHERE call_id IS NOT NULL"), "1");

  // A resumed run, a re-run, another sweep cell: a new gateway over the same database.
  auto second = gateway(provider_config(server_.openai_base_url()), fast_retries(), false, st);
  Answer b = ask_one(second, run_request());
  ASSERT_TRUE(b.response) << to_string(b.error);
  EXPECT_TRUE(b.response->cached);
  EXPECT_EQ(b.response->text, a.response->text);
  EXPECT_EQ(b.response->response_id, a.response->response_id);
  EXPECT_EQ(b.response->cost_usd, 0.0);
  EXPECT_EQ(server_.log().size(), 1u) << "the cached answer cost no request";
  EXPECT_EQ(sql("SELECT COUNT(*) FROM llm_calls"), "1");

  // Another sample index, seed or temperature is another answer.
  ChatRequest other = run_request(1);
  ASSERT_TRUE(ask_one(second, other).response);
  other = run_request();
  other.temperature = 0.0;
  ASSERT_TRUE(ask_one(second, other).response);
  EXPECT_EQ(server_.log().size(), 3u);
}

TEST_F(LlmGatewayTest, NoCacheAsksAgainAndKeepsBothAnswers) {
  auto st = store();
  auto cached = gateway(provider_config(server_.openai_base_url()), fast_retries(), false, st);
  Answer a = ask_one(cached, run_request());
  auto fresh = gateway(provider_config(server_.openai_base_url()), fast_retries(), false, st,
                       /*use_cache=*/false);
  Answer b = ask_one(fresh, run_request());
  ASSERT_TRUE(a.response && b.response);
  EXPECT_FALSE(b.response->cached);
  EXPECT_NE(b.response->response_id, a.response->response_id);
  EXPECT_NE(b.response->text, a.response->text) << "the server's second answer to the prompt";
  EXPECT_EQ(server_.log().size(), 2u);
  EXPECT_EQ(sql("SELECT COUNT(*) FROM llm_responses"), "2");
}

TEST_F(LlmGatewayTest, ACoalescedCallIsOneRowWithItsAnswers) {
  auto st = store();
  SchedulerOptions so = fast_retries();
  so.max_samples_per_call = 3;
  so.coalesce_window = 5s;
  auto g = gateway(provider_config(server_.openai_base_url()), so, false, st);
  auto answers = ask_all(g, {run_request(0), run_request(1), run_request(2)});
  for (auto& a : answers) ASSERT_TRUE(a.response) << to_string(a.error);
  EXPECT_EQ(sql("SELECT COUNT(*) || ' ' || MAX(samples) FROM llm_calls"), "1 3");
  EXPECT_EQ(sql("SELECT COUNT(DISTINCT sample_index) FROM llm_responses WHERE call_id = "
                "(SELECT id FROM llm_calls)"),
            "3");
  // The answers' shares add up to what the server reported for the call.
  EXPECT_EQ(sql("SELECT (SELECT prompt_tokens + completion_tokens FROM llm_calls) = "
                "(SELECT SUM(prompt_tokens + completion_tokens) FROM llm_responses)"),
            "1");
}

TEST_F(LlmGatewayTest, FailedCallsAreRecordedWithTheirCodeAndNoKey) {
  auto st = store();
  server_.faults({"500", "400"});
  auto g = gateway(provider_config(server_.openai_base_url()), fast_retries(), false, st);
  Answer a = ask_one(g, run_request());
  ASSERT_FALSE(a.response);
  auto refused = gateway(provider_config(server_.openai_base_url(), "sk-not-the-right-key-42"),
                         fast_retries(), false, st);
  ASSERT_FALSE(ask_one(refused, run_request(0, "other")).response);
  EXPECT_EQ(sql("SELECT group_concat(status || ':' || error_code || ':' || http_status, ' ') "
                "FROM (SELECT * FROM llm_calls ORDER BY id)"),
            "error:unavailable:500 error:invalid_argument:400 error:unauthenticated:401");
  EXPECT_EQ(sql("SELECT COUNT(*) FROM llm_responses"), "0") << "a failure is never an answer";
  for (auto& gw : gateways_) caf::anon_send_exit(gw, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
  gateways_.clear();
  store_ = StoreActor{};
  system_->await_all_actors_done();  // the store closed: its file is complete
  for (const char* suffix : {"", "-wal"}) {
    std::ifstream in(db_.path() + suffix, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("sk-not-the-right-key"), std::string::npos) << suffix;
  }
}

// -- the spend governor and the total deadline, against the server's own limits ------------

TEST_F(LlmGatewayTest, AHungProviderFailsAtTheTotalDeadlineAndTheNextCallGoesOn) {
  server_.faults({"hang:20", "hang:20", "hang:20", "hang:20"});
  SchedulerOptions so = fast_retries();
  so.retry.max_attempts = 10;
  so.call_deadline = 1500ms;
  auto g = gateway(provider_config(server_.openai_base_url()), so);  // 10 s per attempt
  const auto t0 = std::chrono::steady_clock::now();
  Answer hung = ask_one(g, request(0, "hangs"));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(hung.response);
  EXPECT_EQ(errc_of(hung.error), Errc::deadline_exceeded);
  EXPECT_NE(to_string(hung.error).find("call_deadline"), std::string::npos)
      << to_string(hung.error);
  EXPECT_LT(took, 5s);  // not 10 attempts of 10 s
  server_.reset();
  Answer next = ask_one(g, request(0, "answers"));
  ASSERT_TRUE(next.response) << to_string(next.error);
}

// Prices of the server's (--price-in 0.5 --price-out 3.0 $/1M) for the gateway's own cost.
double fake_cost(const Usage& u) {
  return (static_cast<double>(u.prompt_tokens) * 0.5 + static_cast<double>(u.output_tokens()) * 3.0) /
         1e6;
}

TEST(LlmGatewaySpendTest, NoWindowHoldsMoreThanTheLimitAndTheServerNeverRefuses) {
  const double limit = 0.001;  // about three worst cases of the calls below
  // The gateway's window is 1 s by call start; the server's 0.9 s by arrival, so that up to
  // 100 ms of loopback jitter between the two clocks cannot make it refuse a call the
  // gateway correctly let through.
  testing::FakeLlmServer server({"--usd-per-window", "0.001", "--window-s", "0.9"});
  caf::actor_system_config cfg;
  register_error_category(cfg);
  caf::actor_system sys{cfg};
  HttpProviderConfig c;
  c.model = "test-model";
  c.base_url = server.openai_base_url();
  c.sampling.max_output_tokens = 100;
  SchedulerOptions so;
  so.max_concurrent = 16;
  so.max_output_tokens = 100;
  so.coalesce_window = 0ms;
  so.cost = fake_cost;
  so.max_usd_per_window = limit;
  so.spend_window = 1000ms;
  LlmGatewayOptions o;
  o.scheduler = so;
  auto g = spawn_llm_gateway(
      sys, std::shared_ptr<CallRunner>(make_http_runner(make_openai_provider(c),
                                                        make_curl_transport())),
      o);
  std::vector<std::future<bool>> done;
  for (int i = 0; i < 9; ++i) {
    auto p = std::make_shared<std::promise<bool>>();
    done.push_back(p->get_future());
    ChatRequest r;
    r.workload_id = "8p";
    r.sample_index = 0;
    r.system_prompt = "sys";
    r.user_prompt = "## Workload 8p\nprompt " + std::to_string(i);
    sys.spawn([g, r, p](caf::event_based_actor* self) {
      self->request(g, caf::infinite, generate_atom::value, r)
          .then([p](ChatResponse&) { p->set_value(true); }, [p](caf::error&) { p->set_value(false); });
    });
  }
  for (auto& f : done) EXPECT_TRUE(f.get());
  caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
  json log = server.log();
  std::vector<std::pair<double, double>> answered;  // server time, cost
  for (const auto& e : log) {
    EXPECT_FALSE(e["over_limit"].get<bool>()) << e.dump();
    if (e["status"] == 200)
      answered.push_back({e["t_arrival"].get<double>(), e["cost_usd"].get<double>()});
  }
  ASSERT_EQ(answered.size(), 9u);
  for (const auto& [a, _] : answered) {
    double sum = 0;
    for (const auto& [t, c] : answered)
      if (t >= a && t < a + 0.9) sum += c;
    EXPECT_LE(sum, limit + 1e-12);
  }
}

TEST(LlmGatewaySpendTest, WithoutTheLimitTheServersRetryHintPacesTheRetries) {
  // A window that holds the worst case of one call (100 output tokens, $0.0003) but the real
  // cost of only about four answers: calls are refused even when load spreads them out (at
  // $0.001 a loaded box answered them one by one, each replacing its worst case by its cost).
  testing::FakeLlmServer server({"--usd-per-window", "0.0006", "--window-s", "1"});
  caf::actor_system_config cfg;
  register_error_category(cfg);
  caf::actor_system sys{cfg};
  HttpProviderConfig c;
  c.model = "test-model";
  c.base_url = server.gemini_base_url();
  c.sampling.max_output_tokens = 100;
  SchedulerOptions so;
  so.max_concurrent = 16;
  so.max_output_tokens = 100;
  so.coalesce_window = 0ms;
  so.retry.max_attempts = 20;
  so.retry.base_delay = 1ms;  // backoff alone would hammer the server
  so.retry.max_delay = 2ms;
  LlmGatewayOptions o;
  o.scheduler = so;
  auto g = spawn_llm_gateway(
      sys, std::shared_ptr<CallRunner>(make_http_runner(make_gemini_provider(c),
                                                        make_curl_transport())),
      o);
  std::vector<std::future<bool>> done;
  for (int i = 0; i < 9; ++i) {
    auto p = std::make_shared<std::promise<bool>>();
    done.push_back(p->get_future());
    ChatRequest r;
    r.workload_id = "8p";
    r.system_prompt = "sys";
    r.user_prompt = "## Workload 8p\nprompt " + std::to_string(i);
    sys.spawn([g, r, p](caf::event_based_actor* self) {
      self->request(g, caf::infinite, generate_atom::value, r)
          .then([p](ChatResponse&) { p->set_value(true); }, [p](caf::error&) { p->set_value(false); });
    });
  }
  for (auto& f : done) EXPECT_TRUE(f.get());
  caf::scoped_actor self{sys};
  LlmGatewayStats s;
  self->request(g, caf::infinite, stats_atom::value)
      .receive([&](LlmGatewayStats& got) { s = got; }, [](caf::error&) {});
  caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
  // The server refused some (its spend window), each refusal paused the gateway for the
  // RetryInfo delay and halved its concurrency, and everything was answered in the end.
  int refused = 0;
  for (const auto& e : server.log()) refused += e["fault"] == "spend";
  EXPECT_GT(refused, 0);
  EXPECT_LT(refused, 40);  // paced by the hint, not 20 attempts x 9 at backoff speed
  EXPECT_GT(s.calls.rate_limited, 0);
  EXPECT_LT(s.calls.concurrency_window, 16.0);
}

}  // namespace
}  // namespace palladium
