#include "llm/openai_provider.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/llm/fake_llm_server.hpp"
#include "tests/llm/provider_test_support.hpp"

namespace palladium {
namespace {

using nlohmann::json;

HttpProviderConfig config(const std::string& base = "http://127.0.0.1:9/v1") {
  HttpProviderConfig c;
  c.model = "gpt-test";
  c.base_url = base;
  c.api_key = "sk-secret-test-key-1234";
  c.sampling.temperature = 0.7;
  c.sampling.max_output_tokens = 4096;
  return c;
}

ChatRequest request() { return testing::kernel_request(); }

HttpResponse ok(const json& body) { return testing::http_ok(body); }

TEST(OpenAiProviderTest, RequestCarriesMessagesNAndTheOutputLimit) {
  auto p = make_openai_provider(config("http://127.0.0.1:9/v1/"));
  HttpRequest http = p->build_request(request(), 3);
  EXPECT_EQ(http.url, "http://127.0.0.1:9/v1/chat/completions");
  json body = json::parse(http.body);
  EXPECT_EQ(body["model"], "gpt-test");
  EXPECT_EQ(body["n"], 3);
  EXPECT_EQ(body["max_completion_tokens"], 4096);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], request().user_prompt);
}

TEST(OpenAiProviderTest, OneSampleOmitsNAndOlderServersGetMaxTokens) {
  auto c = config();
  c.max_tokens_field = "max_tokens";
  json body = json::parse(make_openai_provider(c)->build_request(request(), 1).body);
  EXPECT_FALSE(body.contains("n"));
  EXPECT_EQ(body["max_tokens"], 4096);
}

TEST(OpenAiProviderTest, RequestTemperatureOverridesTheConfig) {
  ChatRequest r = request();
  r.temperature = 0.0;
  json body = json::parse(make_openai_provider(config())->build_request(r, 1).body);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.0);
}

TEST(OpenAiProviderTest, KeyGoesInTheAuthorizationHeaderOnly) {
  HttpRequest http = make_openai_provider(config())->build_request(request(), 1);
  EXPECT_EQ(http.url.find("sk-secret"), std::string::npos);
  EXPECT_EQ(http.body.find("sk-secret"), std::string::npos);
  bool found = false;
  for (auto& h : http.headers) found = found || h == "Authorization: Bearer sk-secret-test-key-1234";
  EXPECT_TRUE(found);
}

TEST(OpenAiProviderTest, NoKeyNoAuthorizationHeader) {
  auto c = config();
  c.api_key.clear();
  for (auto& h : make_openai_provider(c)->build_request(request(), 1).headers)
    EXPECT_EQ(h.find("Authorization"), std::string::npos);
}

TEST(OpenAiProviderTest, ParsesChoicesInIndexOrderAndSplitsReasoningTokens) {
  json body = {{"model", "gpt-test-2026"},
               {"choices",
                {{{"index", 1}, {"message", {{"content", "second"}}}, {"finish_reason", "length"}},
                 {{"index", 0}, {"message", {{"content", "first"}}}, {"finish_reason", "stop"}}}},
               {"usage",
                {{"prompt_tokens", 100},
                 {"completion_tokens", 50},
                 {"completion_tokens_details", {{"reasoning_tokens", 30}}}}}};
  CallResult r = make_openai_provider(config())->parse_response(ok(body));
  ASSERT_EQ(r.completions.size(), 2u);
  EXPECT_EQ(r.completions[0].text, "first");
  EXPECT_FALSE(r.completions[0].truncated);
  EXPECT_EQ(r.completions[1].text, "second");
  EXPECT_EQ(r.completions[1].finish_reason, "length");
  EXPECT_TRUE(r.completions[1].truncated);
  EXPECT_EQ(r.usage.prompt_tokens, 100);
  EXPECT_EQ(r.usage.thinking_tokens, 30);
  EXPECT_EQ(r.usage.completion_tokens, 20);  // OpenAI counts reasoning inside completion
  EXPECT_FALSE(r.usage.estimated);
  EXPECT_EQ(r.model, "gpt-test-2026");
}

TEST(OpenAiProviderTest, NullContentIsEmptyAndReasoningContentIsNotText) {
  json body = {{"choices",
                {{{"index", 0},
                  {"message", {{"content", nullptr}, {"reasoning_content", "let me think"}}},
                  {"finish_reason", "length"}}}},
               {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 9}}}};
  CallResult r = make_openai_provider(config())->parse_response(ok(body));
  ASSERT_EQ(r.completions.size(), 1u);
  EXPECT_EQ(r.completions[0].text, "");
  EXPECT_TRUE(r.completions[0].truncated);
}

TEST(OpenAiProviderTest, MissingUsageIsEstimatedAndMarked) {
  json body = {{"choices", {{{"message", {{"content", "12345678"}}}, {"finish_reason", "stop"}}}}};
  CallResult r = make_openai_provider(config())->parse_response(ok(body));
  EXPECT_TRUE(r.usage.estimated);
  EXPECT_EQ(r.usage.completion_tokens, 2);
}

TEST(OpenAiProviderTest, MalformedBodyIsRetryable) {
  HttpResponse resp;
  resp.status = 200;
  resp.body = "{\"choices\": [ {\"message\": ";
  try {
    make_openai_provider(config())->parse_response(resp);
    FAIL() << "expected ProviderError";
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::unavailable);
    EXPECT_TRUE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("openai"), std::string::npos);
  }
  resp.body = R"({"object": "chat.completion"})";
  EXPECT_THROW(make_openai_provider(config())->parse_response(resp), ProviderError);
}

TEST(OpenAiProviderTest, UnauthorizedNamesProviderAndStatusAndNoKey) {
  HttpResponse resp;
  resp.status = 401;
  resp.body = json{{"error",
                    {{"message", "Incorrect API key provided: sk-secret-test-key-1234."},
                     {"type", "invalid_request_error"}}}}
                  .dump();
  try {
    make_openai_provider(config())->parse_response(resp);
    FAIL() << "expected ProviderError";
  } catch (const ProviderError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::unauthenticated);
    EXPECT_FALSE(e.retryable());
    EXPECT_EQ(e.http_status(), 401);
    EXPECT_NE(what.find("openai: HTTP 401"), std::string::npos) << what;
    EXPECT_EQ(what.find("sk-secret"), std::string::npos) << what;
    EXPECT_NE(what.find("[redacted]"), std::string::npos) << what;
  }
}

TEST(OpenAiProviderTest, RateLimitCarriesRetryAfter) {
  HttpResponse resp;
  resp.status = 429;
  resp.headers["retry-after"] = "7";
  resp.body = R"({"error": {"message": "Rate limit reached", "type": "requests"}})";
  try {
    make_openai_provider(config())->parse_response(resp);
    FAIL() << "expected ProviderError";
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::resource_exhausted);
    ASSERT_TRUE(e.retry_after());
    EXPECT_EQ(e.retry_after()->count(), 7000);
  }
}

TEST(OpenAiProviderTest, FoldedSystemTextOpensTheOneUserMessage) {
  auto c = config();
  c.fold_system_prompt = true;
  json body = json::parse(make_openai_provider(c)->build_request(request(), 1).body);
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["messages"][0]["content"],
            request().system_prompt + "\n\n" + request().user_prompt);
}

TEST(OpenAiProviderTest, SeedFollowsTheSearchSeedAndFirstSampleAndCanBeOff) {
  ChatRequest a = request();
  a.seed = 3;
  a.sample_index = 0;
  ChatRequest b = a;
  b.sample_index = 1;
  auto p = make_openai_provider(config());
  const json ja = json::parse(p->build_request(a, 1).body);
  EXPECT_EQ(ja["seed"], request_seed(3, 0));
  EXPECT_EQ(json::parse(p->build_request(a, 1).body)["seed"], ja["seed"]);  // reproducible
  EXPECT_NE(json::parse(p->build_request(b, 1).body)["seed"], ja["seed"]);
  EXPECT_GE(request_seed(~0ULL, 7), 0);
  EXPECT_LT(request_seed(~0ULL, 7), int64_t{1} << 31);
  auto c = config();
  c.send_seed = false;
  EXPECT_FALSE(json::parse(make_openai_provider(c)->build_request(a, 1).body).contains("seed"));
}

TEST(OpenAiProviderTest, CachedPromptTokensAreRead) {
  json body = {{"choices", {{{"index", 0}, {"message", {{"content", "x"}}}, {"finish_reason", "stop"}}}},
               {"usage",
                {{"prompt_tokens", 2000},
                 {"completion_tokens", 10},
                 {"prompt_tokens_details", {{"cached_tokens", 1536}}}}}};
  CallResult r = make_openai_provider(config())->parse_response(ok(body));
  EXPECT_EQ(r.usage.prompt_tokens, 2000);
  EXPECT_EQ(r.usage.cached_prompt_tokens, 1536);
}

TEST(OpenAiProviderTest, AnAnswerPastTheLimitSwitchesToMaxTokens) {
  auto p = make_openai_provider(config());  // max_completion_tokens 4096
  EXPECT_TRUE(json::parse(p->build_request(request(), 1).body).contains("max_completion_tokens"));
  auto answer = [](int64_t completion) {
    return json{{"choices", {{{"index", 0}, {"message", {{"content", "x"}}}, {"finish_reason", "length"}}}},
                {"usage", {{"prompt_tokens", 5}, {"completion_tokens", completion}}}};
  };
  p->parse_response(ok(answer(4096)));  // at the limit: the server honoured it
  EXPECT_TRUE(json::parse(p->build_request(request(), 1).body).contains("max_completion_tokens"));
  p->parse_response(ok(answer(30000)));  // far past it: the field was ignored
  json body = json::parse(p->build_request(request(), 1).body);
  EXPECT_FALSE(body.contains("max_completion_tokens"));
  EXPECT_EQ(body["max_tokens"], 4096);
}

// -- against the local server, over real HTTP ----------------------------------------------

class OpenAiLoopbackTest : public ::testing::Test {
 protected:
  testing::FakeLlmServer server_{{"--api-key", "sk-secret-test-key-1234", "--reasoning-tokens", "5"}};
  std::unique_ptr<HttpTransport> transport_ = make_curl_transport();

  CallResult call(int n, const std::string& key = "sk-secret-test-key-1234") {
    auto c = config(server_.openai_base_url());
    c.api_key = key;
    auto p = make_openai_provider(c);
    return p->parse_response(testing::http_sync(*transport_, p->build_request(request(), n)));
  }
};

TEST_F(OpenAiLoopbackTest, NChoicesAndTheServersUsage) {
  CallResult r = call(3);
  ASSERT_EQ(r.completions.size(), 3u);
  EXPECT_EQ(r.usage.thinking_tokens, 15);
  EXPECT_GT(r.usage.completion_tokens, 0);
  EXPECT_GT(r.usage.prompt_tokens, 0);
  auto log = server_.log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["n"], 3);
  EXPECT_EQ(log[0]["workload"], "8p");
  EXPECT_TRUE(log[0]["auth"].get<bool>());
}

TEST_F(OpenAiLoopbackTest, WrongKeyIsAnImmediateUnauthenticated) {
  try {
    call(1, "sk-wrong-key-000000");
    FAIL() << "expected ProviderError";
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::unauthenticated);
    EXPECT_EQ(std::string(e.what()).find("sk-wrong"), std::string::npos);
  }
}

TEST_F(OpenAiLoopbackTest, EachTransportFaultHasItsCode) {
  server_.faults({"drop", "truncated", "malformed", "500", "429:3", "403", "400", "length"});
  auto code_of = [&] {
    try {
      call(1);
    } catch (const ProviderError& e) {
      return e.code();
    }
    return Errc::internal;  // no error
  };
  EXPECT_EQ(code_of(), Errc::unavailable);  // dropped connection
  EXPECT_EQ(code_of(), Errc::unavailable);  // body cut short of its Content-Length
  EXPECT_EQ(code_of(), Errc::unavailable);  // not JSON
  EXPECT_EQ(code_of(), Errc::unavailable);  // 500
  EXPECT_EQ(code_of(), Errc::resource_exhausted);
  EXPECT_EQ(code_of(), Errc::permission_denied);
  EXPECT_EQ(code_of(), Errc::invalid_argument);
  CallResult cut = call(1);  // a truncated answer is an answer
  ASSERT_EQ(cut.completions.size(), 1u);
  EXPECT_TRUE(cut.completions[0].truncated);
}

TEST_F(OpenAiLoopbackTest, SlowAnswerHitsTheTimeout) {
  server_.faults({"slow:3000"});
  auto c = config(server_.openai_base_url());
  c.timeout = std::chrono::milliseconds(300);
  auto p = make_openai_provider(c);
  HttpResponse resp = testing::http_sync(*transport_, p->build_request(request(), 1));
  EXPECT_EQ(resp.failure, TransportFailure::timeout);
  try {
    p->parse_response(resp);
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::deadline_exceeded);
  }
}

TEST(OpenAiCacheLoopbackTest, ARepeatedPrefixIsReportedCached) {
  testing::FakeLlmServer server({"--cache-min-tokens", "256"});
  auto transport = make_curl_transport();
  auto p = make_openai_provider(config(server.openai_base_url()));
  ChatRequest a = request();
  a.system_prompt = std::string(4000, 's');  // 1000 tokens of stable prefix
  ChatRequest b = a;
  b.user_prompt += " and the feedback of sample 0";
  CallResult first = p->parse_response(testing::http_sync(*transport, p->build_request(a, 1)));
  CallResult second = p->parse_response(testing::http_sync(*transport, p->build_request(b, 1)));
  EXPECT_EQ(first.usage.cached_prompt_tokens, 0);
  EXPECT_EQ(second.usage.cached_prompt_tokens, 896);  // 1000 tokens, whole 128-token blocks
}

}  // namespace
}  // namespace palladium
