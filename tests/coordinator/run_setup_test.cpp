#include "coordinator/run_setup.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

namespace palladium {
namespace {

const std::filesystem::path kHome = PALLADIUM_SOURCE_DIR;

std::string error_of(const RunConfig& c) {
  try {
    search_specs(c, "t.yaml", kHome);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

RunConfig config(const std::string& extra = "") {
  return parse_run_config("name: t\nworkloads: [8p, 12p]\nseeds: [3, 4]\n" + extra, "t.yaml");
}

TEST(RunSetup, OneSearchPerWorkloadAndSeedWithItsBaseline) {
  auto specs = search_specs(config("budget_per_workload: 5\n"), "t.yaml", kHome);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].brief.id, "8p");
  EXPECT_EQ(specs[0].seed, 3u);
  EXPECT_EQ(specs[1].seed, 4u);
  EXPECT_EQ(specs[2].brief.id, "12p");
  EXPECT_EQ(specs[0].budget, 5);
  EXPECT_NE(specs[0].brief.baseline_source.find("def workload"), std::string::npos);
  EXPECT_FALSE(specs[0].brief.name.empty());
}

// Issue 8 item 5: a missing corpus passed validation, then a run row was
// appended to the database before the first LLM call failed.
TEST(RunSetup, AMissingCorpusIsFoundBeforeAnythingIsStored) {
  auto err = error_of(config("llm: {corpus: no/such/corpus}\n"));
  EXPECT_NE(err.find("t.yaml: llm.corpus: no corpus directory"), std::string::npos) << err;
}

TEST(RunSetup, ACorpusWithoutAWorkloadIsNamed) {
  auto c = parse_run_config("name: t\nworkloads: [8p, 20k]\n", "t.yaml");
  auto err = error_of(c);
  EXPECT_NE(err.find("has no responses for workload '20k'"), std::string::npos) << err;
}

TEST(RunSetup, AMissingWorkloadModuleIsNamed) {
  auto c = parse_run_config("name: t\nworkloads: [99k]\n", "t.yaml");
  EXPECT_NE(error_of(c).find("workloads: no workload '99k'"), std::string::npos);
}

TEST(RunSetup, CoordinatorOptionsComeFromTheSections) {
  auto c = config("agents: {local: 3, slots_per_agent: 2, heartbeat_ms: 100, liveness: 5,\n"
                  "         eval_heartbeat_max_ms: 2500}\n"
                  "evaluation: {backend: tpu}\ncoordinator: {scheduler_threads: 1}\n");
  auto o = coordinator_options(c, "/tmp/logs");
  EXPECT_EQ(o.local_agents, 3);
  EXPECT_EQ(o.agent.slots, 2);
  EXPECT_EQ(o.agent.backend, "tpu");
  EXPECT_EQ(o.agent.log_dir, "/tmp/logs");
  EXPECT_EQ(o.dispatch.ledger.heartbeat, std::chrono::milliseconds(100));
  EXPECT_EQ(o.dispatch.ledger.liveness, 5);
  EXPECT_EQ(o.dispatch.ledger.eval_heartbeat_max, std::chrono::milliseconds(2500));
  EXPECT_TRUE(o.link.server_key_file.empty()) << "a fresh key per run by default";
  EXPECT_FALSE(o.link.insecure_plaintext);
  EXPECT_EQ(o.scheduler_threads, 1);
}

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

// The coordinator section's timeouts reach the actors: the run's (and so each search's) and
// the gateways' (RequestTimeouts' own defaults when the section says nothing).
TEST(RunSetup, RequestTimeoutsComeFromTheCoordinatorSection) {
  RequestTimeouts defaults;
  RunPlan absent = run_plan(config(), 1, {}, false);
  EXPECT_EQ(absent.timeouts.store, defaults.store);
  EXPECT_EQ(absent.timeouts.llm, defaults.llm);
  EXPECT_EQ(absent.timeouts.run, defaults.run);
  EXPECT_EQ(absent.timeouts.status, defaults.status);
  auto set =
      config("coordinator:\n  timeouts: {store_s: 7, llm_s: 60, run_s: 3600, status_s: 2}\n");
  RunPlan plan = run_plan(set, 1, {}, false);
  EXPECT_EQ(plan.timeouts.store, std::chrono::seconds(7));
  EXPECT_EQ(plan.timeouts.llm, std::chrono::seconds(60));
  EXPECT_EQ(plan.timeouts.run, std::chrono::seconds(3600));
  EXPECT_EQ(plan.timeouts.status, std::chrono::seconds(2));
  EXPECT_EQ(coordinator_options(set, "logs").timeouts.store, std::chrono::seconds(7))
      << "the gateways' store waits";
}

TEST(RunSetup, HandTunedReferencesNeedAReferencePerWorkload) {
  auto ok = parse_run_config("name: t\nworkloads: [8p, 1p]\nllm: {provider: hand_tuned}\n", "t.yaml");
  EXPECT_EQ(search_specs(ok, "t.yaml", kHome).size(), 2u);
  EXPECT_EQ(make_provider(ok.llm, "t.yaml", kHome)->name(), "hand_tuned");
  auto bad = parse_run_config("name: t\nworkloads: [12p]\nllm: {provider: hand_tuned}\n", "t.yaml");
  EXPECT_NE(error_of(bad).find("'12p' has no hand-tuned reference"), std::string::npos);
}

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

std::string backend_error(const std::string& llm_yaml) {
  try {
    auto c = parse_run_config("name: t\nworkloads: [8p]\nllm: " + llm_yaml + "\n", "t.yaml");
    make_llm_backend(c.llm, "t.yaml", kHome);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RunSetup, RemoteProvidersReadEveryGatewayKey) {
  auto c = parse_run_config(
      "name: t\nworkloads: [8p]\nllm: {provider: openai, model: gpt-5-mini, base_url: "
      "'http://127.0.0.1:9/v1', api_key_env: '', max_concurrent: 3, requests_per_minute: 60, "
      "tokens_per_minute: 9000, max_attempts: 2, max_usd: 1.5, temperature: 0.5, "
      "max_output_tokens: 1000, samples_per_call: 2}\n",
      "t.yaml");
  auto b = make_llm_backend(c.llm, "t.yaml", kHome);
  EXPECT_EQ(b.runner->provider(), "openai");
  EXPECT_EQ(b.runner->model(), "gpt-5-mini");
  EXPECT_EQ(b.runner->max_samples_per_call(), 2);
  const SchedulerOptions& so = b.options.scheduler;
  EXPECT_EQ(so.max_concurrent, 3);
  EXPECT_EQ(so.requests_per_minute, 60);
  EXPECT_EQ(so.tokens_per_minute, 9000);
  EXPECT_EQ(so.retry.max_attempts, 2);
  EXPECT_EQ(so.max_output_tokens, 1000);
  EXPECT_EQ(so.max_usd, 1.5);
  ASSERT_TRUE(so.cost) << "configs/prices.yaml prices gpt-5-mini";
  Usage u;
  u.completion_tokens = 1000000;
  EXPECT_GT(so.cost(u), 0.0);
}

TEST(RunSetup, SplitBatchModePricesEachCallAsItWent) {
  const std::string journal =
      (std::filesystem::temp_directory_path() / ("split_journal_" + std::to_string(::getpid())))
          .string();
  auto c = parse_run_config(
      "name: t\nworkloads: [8p]\nllm: {provider: openai, model: gpt-5-mini, base_url: "
      "'http://127.0.0.1:9/v1', api_key_env: '', mode: batch, online_methods: [iterative], "
      "batch_journal: '" + journal + "'}\n",
      "t.yaml");
  auto b = make_llm_backend(c.llm, "t.yaml", kHome);
  ASSERT_TRUE(b.options.scheduler.cost);
  Usage online;
  online.prompt_tokens = 1000000;
  online.completion_tokens = 1000000;
  Usage job = online;
  job.batch = true;
  EXPECT_NEAR(b.options.scheduler.cost(job), b.options.scheduler.cost(online) / 2, 1e-12);
  std::filesystem::remove(journal);
}

TEST(RunSetup, SplitBatchModeKeepsTheOnlineCapAndDeadline) {
  const std::string journal =
      (std::filesystem::temp_directory_path() / ("split_cap_journal_" + std::to_string(::getpid())))
          .string();
  auto c = parse_run_config(
      "name: t\nworkloads: [8p]\nllm: {provider: openai, model: gpt-5-mini, base_url: "
      "'http://127.0.0.1:9/v1', api_key_env: '', mode: batch, online_methods: [iterative], "
      "max_concurrent: 3, call_deadline_s: 120, batch_journal: '" + journal + "'}\n",
      "t.yaml");
  const SchedulerOptions so = make_llm_backend(c.llm, "t.yaml", kHome).options.scheduler;
  EXPECT_EQ(so.max_concurrent, 3);
  ASSERT_TRUE(so.call_deadline);
  EXPECT_EQ(*so.call_deadline, std::chrono::seconds(120));
  ASSERT_TRUE(so.in_job);
  ChatRequest r;
  r.role = SampleRole::code;
  r.method = "iterative";
  EXPECT_FALSE(so.in_job(r));
  r.method = "beam";
  EXPECT_TRUE(so.in_job(r));
  std::filesystem::remove(journal);

  // All in jobs: nothing is online, so no cap or deadline applies.
  auto all = parse_run_config(
      "name: t\nworkloads: [8p]\nllm: {provider: openai, model: gpt-5-mini, base_url: "
      "'http://127.0.0.1:9/v1', api_key_env: '', mode: batch, max_concurrent: 3, "
      "call_deadline_s: 120, batch_journal: '" + journal + "'}\n",
      "t.yaml");
  const SchedulerOptions jo = make_llm_backend(all.llm, "t.yaml", kHome).options.scheduler;
  EXPECT_GT(jo.max_concurrent, 1000);
  EXPECT_FALSE(jo.call_deadline);
  std::filesystem::remove(journal);
}

TEST(RunSetup, RemoteProviderMistakesAreNamed) {
  EXPECT_NE(backend_error("{provider: gemini}").find("llm.model: is required"), std::string::npos);
  ::unsetenv("PALLADIUM_TEST_NO_SUCH_KEY");
  auto err = backend_error("{provider: gemini, model: gemini-2.5-flash, api_key_env: "
                           "PALLADIUM_TEST_NO_SUCH_KEY}");
  EXPECT_NE(err.find("llm.api_key_env: the environment variable PALLADIUM_TEST_NO_SUCH_KEY is not "
                     "set"),
            std::string::npos)
      << err;
  err = backend_error("{provider: openai, model: my-local-model, api_key_env: '', max_usd: 1}");
  EXPECT_NE(err.find("llm.max_usd: no price for openai model 'my-local-model'"), std::string::npos)
      << err;
  EXPECT_NE(backend_error("{provider: openai, model: m, base_url: 'ftp://x'}").find("llm.base_url"),
            std::string::npos);
  EXPECT_NE(backend_error("{provider: claude}").find("llm.provider: 'claude' is not implemented"),
            std::string::npos);
  EXPECT_NE(backend_error("{provider: openai, model: m, api_key_env: '', temperature: 7}")
                .find("llm.temperature"),
            std::string::npos);
}

TEST(RunSetup, TheKeyComesFromTheNamedVariableAndNeverFromTheConfig) {
  ::setenv("PALLADIUM_TEST_KEY", "sk-from-env-77", 1);
  auto c = parse_run_config(
      "name: t\nworkloads: [8p]\nllm: {provider: openai, model: m, api_key_env: PALLADIUM_TEST_KEY}\n",
      "t.yaml");
  EXPECT_EQ(c.llm.api_key_env, "PALLADIUM_TEST_KEY");
  EXPECT_NO_THROW(make_llm_backend(c.llm, "t.yaml", kHome));
  auto d = parse_run_config("name: t\nworkloads: [8p]\nllm: {provider: gemini, model: m}\n", "t.yaml");
  EXPECT_EQ(d.llm.api_key_env, "GEMINI_API_KEY");
  ::unsetenv("PALLADIUM_TEST_KEY");
}

}  // namespace
}  // namespace palladium
