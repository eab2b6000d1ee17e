// Batch mode against tests/llm/fake_llm_server.py, which speaks both batch APIs: create,
// poll, results, partial failure, expiry, and a runner killed mid-batch that resumes by
// polling the same job instead of submitting it again.
#include "llm/batch_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "llm/gemini_provider.hpp"
#include "llm/openai_provider.hpp"
#include "tests/llm/fake_llm_server.hpp"
#include "tests/llm/provider_test_support.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

BatchOptions fast(std::shared_ptr<BatchJournal> journal = nullptr) {
  BatchOptions o;
  o.collect = 100ms;
  o.poll_interval = 50ms;
  o.journal = std::move(journal);
  return o;
}

std::shared_ptr<HttpProvider> provider(const testing::FakeLlmServer& server, bool gemini) {
  HttpProviderConfig c;
  c.model = "test-model";
  c.api_key = "k";
  c.sampling.max_output_tokens = 64;
  c.base_url = gemini ? server.gemini_base_url() : server.openai_base_url();
  return gemini ? std::shared_ptr<HttpProvider>(make_gemini_provider(c))
                : std::shared_ptr<HttpProvider>(make_openai_provider(c));
}

ChatRequest call_for(int k) {
  ChatRequest r = testing::kernel_request();
  r.user_prompt += " variant " + std::to_string(k);
  return r;
}

// Starts one call per request at once and waits for every outcome.
std::vector<CallOutcome> run_all(CallRunner& runner, int calls, int first = 0) {
  std::vector<std::future<CallOutcome>> got;
  for (int k = first; k < first + calls; ++k) {
    auto p = std::make_shared<std::promise<CallOutcome>>();
    got.push_back(p->get_future());
    runner.start(ProviderCall{call_for(k), {0}, std::nullopt},
                 [p](CallOutcome o) { p->set_value(std::move(o)); });
  }
  std::vector<CallOutcome> out;
  for (auto& f : got) out.push_back(f.get());
  return out;
}

int jobs_in(const json& log) {
  int n = 0;
  for (const auto& e : log) n += e.contains("batch_job") ? 1 : 0;
  return n;
}

int online_calls_in(const json& log) {
  int n = 0;
  for (const auto& e : log)
    n += !e.contains("batch_job") && !e.value("batch", false) ? 1 : 0;
  return n;
}

class BatchRunnerTest : public ::testing::TestWithParam<bool> {};  // true: Gemini

TEST_P(BatchRunnerTest, CallsGoOutAsOneJobAndComeBackWithUsageAndTheJobsId) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "300"});
  auto runner = make_batch_runner(provider(server, GetParam()), make_curl_transport(), fast());
  auto outcomes = run_all(*runner, 3);
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.result) << o.error->what();
    EXPECT_EQ(o.result->completions.size(), 1u);
    EXPECT_GT(o.result->usage.prompt_tokens, 0);
    EXPECT_FALSE(o.result->batch_id.empty());
  }
  const json log = server.log();
  EXPECT_EQ(jobs_in(log), 1);
  EXPECT_EQ(online_calls_in(log), 0);
}

TEST_P(BatchRunnerTest, APartialFailureFailsOnlyItsRequest) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "100"});
  server.faults({"ok", "ok", "500", "ok"});  // the create, then one per request line
  auto runner = make_batch_runner(provider(server, GetParam()), make_curl_transport(), fast());
  auto outcomes = run_all(*runner, 3);
  int failed = 0;
  for (const auto& o : outcomes) {
    if (o.error) {
      ++failed;
      EXPECT_TRUE(o.error->retryable()) << o.error->what();
    }
  }
  EXPECT_EQ(failed, 1);
}

TEST_P(BatchRunnerTest, AnExpiredBatchFailsItsCallsWithTheProvidersReason) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "100"});
  server.faults({"expire"});
  auto runner = make_batch_runner(provider(server, GetParam()), make_curl_transport(), fast());
  for (const auto& o : run_all(*runner, 2)) {
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->code(), Errc::unavailable);
    const std::string what = o.error->what();
    EXPECT_NE(what.find(GetParam() ? "BATCH_STATE_EXPIRED" : "batch_expired"), std::string::npos)
        << what;
  }
}

TEST_P(BatchRunnerTest, ARunnerKilledMidBatchResumesByPollingTheSameJob) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "1500"});
  const auto path = std::filesystem::temp_directory_path() /
                    ("palladium_batch_journal_" + std::to_string(::getpid()) +
                     (GetParam() ? "_g" : "_o") + ".jsonl");
  std::filesystem::remove(path);
  {
    auto first = make_batch_runner(provider(server, GetParam()), make_curl_transport(),
                                   fast(open_batch_journal(path.string())));
    for (int k = 0; k < 2; ++k)
      first->start(ProviderCall{call_for(k), {0}, std::nullopt}, [](CallOutcome) {});
    // Submitted, not yet done: the coordinator dies here.
    for (int i = 0; i < 100 && jobs_in(server.log()) == 0; ++i) std::this_thread::sleep_for(20ms);
    ASSERT_EQ(jobs_in(server.log()), 1);
  }
  auto second = make_batch_runner(provider(server, GetParam()), make_curl_transport(),
                                  fast(open_batch_journal(path.string())));
  for (const auto& o : run_all(*second, 2)) ASSERT_TRUE(o.result) << o.error->what();
  EXPECT_EQ(jobs_in(server.log()), 1);  // polled, never submitted twice
  std::filesystem::remove(path);
}

TEST_P(BatchRunnerTest, ACreateWhoseAnswerWasLostIsFoundByItsKeyNotSubmittedAgain) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "200"});
  server.faults({"drop-after-create"});  // the job exists; its id never reaches the runner
  auto runner = make_batch_runner(provider(server, GetParam()), make_curl_transport(), fast());
  for (const auto& o : run_all(*runner, 2)) ASSERT_TRUE(o.result) << o.error->what();
  EXPECT_EQ(jobs_in(server.log()), 1);
}

TEST_P(BatchRunnerTest, AKillBetweenTheCreateAndItsJournalRecordResumesByLookingTheJobUp) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "300"});
  const auto path = std::filesystem::temp_directory_path() /
                    ("palladium_batch_intent_" + std::to_string(::getpid()) +
                     (GetParam() ? "_g" : "_o") + ".jsonl");
  std::filesystem::remove(path);
  server.faults({"drop-after-create"});
  {
    // The first runner never gets to look the job up: it dies with only the intent journalled.
    BatchOptions slow = fast(open_batch_journal(path.string()));
    slow.poll_interval = 60s;
    auto first = make_batch_runner(provider(server, GetParam()), make_curl_transport(), slow);
    for (int k = 0; k < 2; ++k)
      first->start(ProviderCall{call_for(k), {0}, std::nullopt}, [](CallOutcome) {});
    for (int i = 0; i < 200 && jobs_in(server.log()) == 0; ++i) std::this_thread::sleep_for(20ms);
    ASSERT_EQ(jobs_in(server.log()), 1);
    std::this_thread::sleep_for(100ms);  // the dropped answer has reached the runner
  }
  auto journal = open_batch_journal(path.string());
  ASSERT_EQ(journal->open_intents().size(), 1u);
  ASSERT_TRUE(journal->open_jobs().empty());
  auto second = make_batch_runner(provider(server, GetParam()), make_curl_transport(),
                                  fast(open_batch_journal(path.string())));
  for (const auto& o : run_all(*second, 2)) ASSERT_TRUE(o.result) << o.error->what();
  EXPECT_EQ(jobs_in(server.log()), 1);  // found by its key, never submitted twice
  EXPECT_TRUE(open_batch_journal(path.string())->open_intents().empty());
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(OpenAiAndGemini, BatchRunnerTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Gemini" : "OpenAi"; });

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

TEST(GeminiBatchFile, AJobLargerThanTheInlineLimitGoesAsAnUploadedJsonlFile) {
  testing::FakeLlmServer server({"--api-key", "k", "--batch-ms", "100"});
  BatchOptions o = fast();
  o.gemini_inline_limit = 100;  // every job of this test is larger
  auto runner = make_batch_runner(provider(server, true), make_curl_transport(), o);
  auto outcomes = run_all(*runner, 3);
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.result) << o.error->what();
    EXPECT_GT(o.result->usage.prompt_tokens, 0);
  }
  const json log = server.log();
  int uploads = 0;
  for (const auto& e : log) uploads += e.value("path", "") == "upload/v1beta/files" ? 1 : 0;
  EXPECT_EQ(uploads, 1);
  EXPECT_EQ(jobs_in(log), 1);
  EXPECT_EQ(online_calls_in(log) - uploads, 0);
}

}  // namespace
}  // namespace palladium
