// The HTTP runner's check of the server's prompt token count, against the local stand-in
// started with --drop-system (a chat template that drops the system message).
#include "llm/call_runner.hpp"

#include <gtest/gtest.h>

#include <future>

#include "llm/openai_provider.hpp"
#include "tests/llm/fake_llm_server.hpp"
#include "tests/llm/provider_test_support.hpp"

namespace palladium {
namespace {

CallOutcome run(CallRunner& runner, const ChatRequest& request) {
  auto done = std::make_shared<std::promise<CallOutcome>>();
  auto got = done->get_future();
  runner.start(ProviderCall{request, {0}, {}}, [done](CallOutcome o) { done->set_value(std::move(o)); });
  return got.get();
}

ChatRequest long_system_request() {
  ChatRequest r = testing::kernel_request();
  r.system_prompt = std::string(17900, 'c');  // the task and the context blocks
  return r;
}

std::unique_ptr<CallRunner> runner_for(const testing::FakeLlmServer& server, PromptCheck check,
                                       bool fold = false) {
  HttpProviderConfig c;
  c.model = "gpt-test";
  c.base_url = server.openai_base_url();
  c.fold_system_prompt = fold;
  return make_http_runner(make_openai_provider(c), make_curl_transport(), check);
}

TEST(PromptShortfallTest, OnlyALargeShortfallOfALongPromptCounts) {
  PromptCheck check;
  EXPECT_EQ(prompt_shortfall(check, "openai", 1000, 4000, true), "");  // as estimated
  EXPECT_EQ(prompt_shortfall(check, "openai", 600, 4000, true), "");   // 6.7 chars a token
  EXPECT_EQ(prompt_shortfall(check, "openai", 10, 300, true), "");     // too short to tell
  const std::string msg = prompt_shortfall(check, "openai", 300, 4000, true);
  EXPECT_NE(msg.find("openai: prompt_shortfall: the server counted 300 prompt tokens for 4000 "
                     "characters"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("llm.fold_system_prompt"), std::string::npos) << msg;
}

TEST(PromptShortfallTest, ADroppedSystemMessageFailsTheCallByName) {
  testing::FakeLlmServer server({"--drop-system"});
  auto runner = runner_for(server, PromptCheck{});
  CallOutcome o = run(*runner, long_system_request());
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->code(), Errc::failed_precondition);
  EXPECT_FALSE(o.error->retryable());
  EXPECT_NE(std::string(o.error->what()).find("prompt_shortfall"), std::string::npos);
}

TEST(PromptShortfallTest, WarnModeGoesOnAndFoldingTheSystemTextCuresIt) {
  testing::FakeLlmServer server({"--drop-system"});
  PromptCheck warn;
  warn.fail = false;
  CallOutcome warned = run(*runner_for(server, warn), long_system_request());
  ASSERT_TRUE(warned.result);
  EXPECT_LT(warned.result->usage.prompt_tokens, 100);
  // Folded into the user message, the system text survives the template.
  CallOutcome folded = run(*runner_for(server, PromptCheck{}, true), long_system_request());
  ASSERT_TRUE(folded.result) << (folded.error ? folded.error->what() : "");
  EXPECT_GE(folded.result->usage.prompt_tokens, 17900 / 4);
}

}  // namespace
}  // namespace palladium
