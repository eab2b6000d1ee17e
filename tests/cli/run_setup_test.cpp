#include "cli/run_setup.hpp"

#include <gtest/gtest.h>

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
  auto c = config("agents: {local: 3, slots_per_agent: 2, heartbeat_ms: 100, liveness: 5}\n"
                  "evaluation: {backend: tpu}\ncoordinator: {scheduler_threads: 1}\n");
  auto o = coordinator_options(c, "/tmp/logs");
  EXPECT_EQ(o.local_agents, 3);
  EXPECT_EQ(o.agent.slots, 2);
  EXPECT_EQ(o.agent.backend, "tpu");
  EXPECT_EQ(o.agent.log_dir, "/tmp/logs");
  EXPECT_EQ(o.dispatch.ledger.heartbeat, std::chrono::milliseconds(100));
  EXPECT_EQ(o.dispatch.ledger.liveness, 5);
  EXPECT_TRUE(o.link.server_key_file.empty()) << "a fresh key per run by default";
  EXPECT_FALSE(o.link.insecure_plaintext);
  EXPECT_EQ(o.scheduler_threads, 1);
}

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

TEST(RunSetup, HandTunedReferencesNeedAReferencePerWorkload) {
  auto ok = parse_run_config("name: t\nworkloads: [8p, 1p]\nllm: {provider: hand_tuned}\n", "t.yaml");
  EXPECT_EQ(search_specs(ok, "t.yaml", kHome).size(), 2u);
  EXPECT_EQ(make_provider(ok.llm, "t.yaml", kHome)->name(), "hand_tuned");
  auto bad = parse_run_config("name: t\nworkloads: [12p]\nllm: {provider: hand_tuned}\n", "t.yaml");
  EXPECT_NE(error_of(bad).find("'12p' has no hand-tuned reference"), std::string::npos);
}

}  // namespace
}  // namespace palladium
