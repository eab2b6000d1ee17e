#include "llm/gemini_provider.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/llm/fake_llm_server.hpp"
#include "tests/llm/provider_test_support.hpp"

namespace palladium {
namespace {

using nlohmann::json;

HttpProviderConfig config(const std::string& base = "http://127.0.0.1:9/v1beta") {
  HttpProviderConfig c;
  c.model = "gemini-3-flash-preview";
  c.base_url = base;
  c.api_key = "AIzaSyTestKey0123456789";
  c.sampling.temperature = 1.0;
  c.sampling.max_output_tokens = 8192;
  c.sampling.thinking_budget = 1024;
  return c;
}

ChatRequest request() { return testing::kernel_request(); }

HttpResponse ok(const json& body) { return testing::http_ok(body); }

TEST(GeminiProviderTest, FoldedSystemTextOpensTheUserTurnAndSeedIsSent) {
  auto c = config();
  c.fold_system_prompt = true;
  ChatRequest r = request();
  r.seed = 9;
  r.sample_index = 4;
  json body = json::parse(make_gemini_provider(c)->build_request(r, 1).body);
  EXPECT_FALSE(body.contains("systemInstruction"));
  EXPECT_EQ(body["contents"][0]["parts"][0]["text"], r.system_prompt + "\n\n" + r.user_prompt);
  EXPECT_EQ(body["generationConfig"]["seed"], request_seed(9, 4));
}

TEST(GeminiProviderTest, CachedContentTokensAreRead) {
  json body = {{"candidates", {{{"content", {{"parts", {{{"text", "x"}}}}}}, {"finishReason", "STOP"}}}},
               {"usageMetadata",
                {{"promptTokenCount", 5000},
                 {"candidatesTokenCount", 10},
                 {"cachedContentTokenCount", 4096}}}};
  CallResult r = make_gemini_provider(config())->parse_response(ok(body));
  EXPECT_EQ(r.usage.cached_prompt_tokens, 4096);
  EXPECT_EQ(r.usage.prompt_tokens, 5000);
}

TEST(GeminiProviderTest, RequestCarriesSystemInstructionAndGenerationConfig) {
  HttpRequest http = make_gemini_provider(config())->build_request(request(), 2);
  EXPECT_EQ(http.url,
            "http://127.0.0.1:9/v1beta/models/gemini-3-flash-preview:generateContent");
  json body = json::parse(http.body);
  EXPECT_EQ(body["systemInstruction"]["parts"][0]["text"], "You write kernels.");
  EXPECT_EQ(body["contents"][0]["role"], "user");
  EXPECT_EQ(body["contents"][0]["parts"][0]["text"], request().user_prompt);
  const json& gen = body["generationConfig"];
  EXPECT_EQ(gen["candidateCount"], 2);
  EXPECT_EQ(gen["maxOutputTokens"], 8192);
  EXPECT_DOUBLE_EQ(gen["temperature"].get<double>(), 1.0);
  EXPECT_EQ(gen["thinkingConfig"]["thinkingBudget"], 1024);
}

TEST(GeminiProviderTest, ThinkingLevelAndModelsPrefixAreAccepted) {
  auto c = config();
  c.model = "models/gemini-3-flash-preview";
  c.sampling.thinking_budget.reset();
  c.sampling.thinking_level = "low";
  HttpRequest http = make_gemini_provider(c)->build_request(request(), 1);
  EXPECT_EQ(http.url,
            "http://127.0.0.1:9/v1beta/models/gemini-3-flash-preview:generateContent");
  json gen = json::parse(http.body)["generationConfig"];
  EXPECT_FALSE(gen.contains("candidateCount"));
  EXPECT_EQ(gen["thinkingConfig"]["thinkingLevel"], "low");
  EXPECT_FALSE(gen["thinkingConfig"].contains("thinkingBudget"));
}

TEST(GeminiProviderTest, KeyGoesInTheHeaderNeverTheUrl) {
  HttpRequest http = make_gemini_provider(config())->build_request(request(), 1);
  EXPECT_EQ(http.url.find("key="), std::string::npos);
  EXPECT_EQ(http.url.find("AIza"), std::string::npos);
  bool found = false;
  for (auto& h : http.headers) found = found || h == "x-goog-api-key: AIzaSyTestKey0123456789";
  EXPECT_TRUE(found);
}

TEST(GeminiProviderTest, ParsesCandidatesWithoutThoughtPartsAndThoughtTokens) {
  json body = {
      {"candidates",
       {{{"content", {{"parts", {{{"text", "thinking..."}, {"thought", true}}, {{"text", "a"}}, {{"text", "b"}}}}}},
         {"finishReason", "STOP"},
         {"index", 0}},
        {{"content", {{"parts", {{{"text", "cut"}}}}}}, {"finishReason", "MAX_TOKENS"}, {"index", 1}}}},
      {"usageMetadata",
       {{"promptTokenCount", 40}, {"candidatesTokenCount", 12}, {"thoughtsTokenCount", 300}}},
      {"modelVersion", "gemini-3-flash-preview-001"}};
  CallResult r = make_gemini_provider(config())->parse_response(ok(body));
  ASSERT_EQ(r.completions.size(), 2u);
  EXPECT_EQ(r.completions[0].text, "ab");
  EXPECT_EQ(r.completions[0].finish_reason, "STOP");
  EXPECT_FALSE(r.completions[0].truncated);
  EXPECT_TRUE(r.completions[1].truncated);
  EXPECT_EQ(r.usage.prompt_tokens, 40);
  EXPECT_EQ(r.usage.completion_tokens, 12);  // Gemini does not count thoughts in candidates
  EXPECT_EQ(r.usage.thinking_tokens, 300);
  EXPECT_EQ(r.model, "gemini-3-flash-preview-001");
}

TEST(GeminiProviderTest, CandidateWithoutContentIsAnEmptyTruncatedAnswer) {
  // All of maxOutputTokens spent on thinking: no content at all.
  json body = {{"candidates", {{{"finishReason", "MAX_TOKENS"}, {"index", 0}}}},
               {"usageMetadata", {{"promptTokenCount", 40}, {"thoughtsTokenCount", 8192}}}};
  CallResult r = make_gemini_provider(config())->parse_response(ok(body));
  ASSERT_EQ(r.completions.size(), 1u);
  EXPECT_EQ(r.completions[0].text, "");
  EXPECT_TRUE(r.completions[0].truncated);
}

TEST(GeminiProviderTest, BlockedPromptIsAnAnswerForEverySample) {
  json body = {{"promptFeedback", {{"blockReason", "SAFETY"}}},
               {"usageMetadata", {{"promptTokenCount", 40}}}};
  CallResult r = make_gemini_provider(config())->parse_response(ok(body));
  ASSERT_EQ(r.completions.size(), 1u);
  EXPECT_TRUE(r.answers_all);
  EXPECT_EQ(r.completions[0].finish_reason, "BLOCKED:SAFETY");
}

TEST(GeminiProviderTest, RetryInfoIsHonouredLikeRetryAfter) {
  HttpResponse resp;
  resp.status = 429;
  resp.body = json{{"error",
                    {{"code", 429},
                     {"message", "Resource has been exhausted"},
                     {"status", "RESOURCE_EXHAUSTED"},
                     {"details",
                      {{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                        {"retryDelay", "13s"}}}}}}}
                  .dump();
  try {
    make_gemini_provider(config())->parse_response(resp);
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::resource_exhausted);
    ASSERT_TRUE(e.retry_after());
    EXPECT_EQ(e.retry_after()->count(), 13000);
    EXPECT_NE(std::string(e.what()).find("RESOURCE_EXHAUSTED"), std::string::npos);
  }
}

TEST(GeminiProviderTest, InvalidKeyIs400ButUnauthenticated) {
  HttpResponse resp;
  resp.status = 400;
  resp.body = json{{"error",
                    {{"code", 400},
                     {"message", "API key not valid. key=AIzaSyTestKey0123456789"},
                     {"status", "INVALID_ARGUMENT"},
                     {"details",
                      {{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                        {"reason", "API_KEY_INVALID"}}}}}}}
                  .dump();
  try {
    make_gemini_provider(config())->parse_response(resp);
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::unauthenticated);
    EXPECT_EQ(std::string(e.what()).find("AIzaSyTestKey"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gemini: HTTP 400"), std::string::npos);
  }
}

TEST(GeminiProviderTest, NoCandidatesAndNoBlockIsMalformed) {
  try {
    make_gemini_provider(config())->parse_response(ok(json{{"usageMetadata", json::object()}}));
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_TRUE(e.retryable());
  }
}

TEST(GeminiProviderTest, AgainstTheLocalServer) {
  testing::FakeLlmServer server({"--api-key", "AIzaSyTestKey0123456789", "--reasoning-tokens", "9"});
  auto transport = make_curl_transport();
  auto p = make_gemini_provider(config(server.gemini_base_url()));
  CallResult r = p->parse_response(testing::http_sync(*transport, p->build_request(request(), 2)));
  ASSERT_EQ(r.completions.size(), 2u);
  EXPECT_EQ(r.usage.thinking_tokens, 18);
  EXPECT_NE(r.completions[0].text, r.completions[1].text);
  auto log = server.log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["api"], "gemini");
  EXPECT_EQ(log[0]["n"], 2);
  EXPECT_TRUE(log[0]["auth"].get<bool>());

  auto bad = config(server.gemini_base_url());
  bad.api_key = "AIzaSyWrongKey99999999";
  auto q = make_gemini_provider(bad);
  try {
    q->parse_response(testing::http_sync(*transport, q->build_request(request(), 1)));
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_EQ(e.code(), Errc::unauthenticated);
  }
}

}  // namespace
}  // namespace palladium
