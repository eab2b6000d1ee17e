#include "config/run_config.hpp"

#include <gtest/gtest.h>

#include "tests/config/config_error.hpp"

namespace palladium {
namespace {

std::string error_of(const std::string& yaml) { return testing::config_error_of(yaml); }

TEST(RunConfig, ParsesAllSections) {
  auto c = parse_run_config(R"(
name: q
workloads: [8p, 41k]
budget_per_workload: 3
seeds: [4, 5]
llm: {provider: replay, corpus: some/dir}
evaluation: {backend: interpret, timeout_s: 12.5, input_seeds: [7], require_pallas: false}
agents: {local: 3, slots_per_agent: 2, listen: "tcp://0.0.0.0:5555", heartbeat_ms: 100, liveness: 3}
coordinator: {scheduler_threads: 3}
)", "t");
  EXPECT_EQ(c.name, "q");
  EXPECT_EQ(c.workloads, (std::vector<std::string>{"8p", "41k"}));
  EXPECT_EQ(c.search.budget_per_workload, 3);
  EXPECT_EQ(c.seeds, (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(c.llm.corpus, "some/dir");
  EXPECT_DOUBLE_EQ(c.evaluation.timeout_s, 12.5);
  EXPECT_EQ(c.evaluation.input_seeds, (std::vector<int64_t>{7}));
  EXPECT_FALSE(c.evaluation.require_pallas);
  EXPECT_EQ(c.agents.local, 3);
  EXPECT_EQ(c.agents.slots_per_agent, 2);
  EXPECT_EQ(c.agents.listen, "tcp://0.0.0.0:5555");
  EXPECT_EQ(c.agents.heartbeat_ms, 100);
  EXPECT_EQ(c.agents.liveness, 3);
  EXPECT_EQ(c.coordinator.scheduler_threads, 3);
}

TEST(RunConfig, ErrorsNameTheFileAndKey) {
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nbudget_per_workload: x\n")
                .find("test.yaml: budget_per_workload: has the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nagents: {locals: 2}\n").find("agents.locals: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [gemm]\n").find("'gemm' is not a JAXBench id"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p, 8p]\n").find("listed twice"), std::string::npos);
  EXPECT_NE(error_of("workloads: [8p]\n").find("name: is required"), std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nmethod: beam\n").find("method: 'beam' is not a method"),
            std::string::npos);
  EXPECT_NE(error_of("name: [unclosed\n").find("YAML syntax error at line"), std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nevaluation: {timeout_s: 0}\n")
                .find("evaluation.timeout_s: must be > 0"),
            std::string::npos);
}

// Issue 8 item 5: each of these was accepted and failed much later, or silently.
TEST(RunConfig, ResultCheckKeysHaveDefaultsAndRanges) {
  auto c = parse_run_config("name: q\nworkloads: [8p]\n", "t.yaml");
  EXPECT_DOUBLE_EQ(c.evaluation.recheck_share, 0.05);
  EXPECT_DOUBLE_EQ(c.evaluation.speedup_ceiling, 10);
  auto set = parse_run_config(
      "name: q\nworkloads: [8p]\nevaluation: {recheck_share: 0.5, speedup_ceiling: 4}\n", "t.yaml");
  EXPECT_DOUBLE_EQ(set.evaluation.recheck_share, 0.5);
  EXPECT_DOUBLE_EQ(set.evaluation.speedup_ceiling, 4);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nevaluation: {recheck_share: 1.5}\n")
                .find("evaluation.recheck_share"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nevaluation: {speedup_ceiling: 1}\n")
                .find("evaluation.speedup_ceiling: must be > 1"),
            std::string::npos);
}

TEST(RunConfig, AnInfiniteOrHugeTimeoutIsRefused) {
  for (const char* v : {".inf", "-.inf", ".nan", "1e300"}) {
    auto err = error_of(std::string("name: q\nworkloads: [8p]\nevaluation: {timeout_s: ") + v + "}\n");
    EXPECT_NE(err.find("evaluation.timeout_s: must be"), std::string::npos) << v << ": " << err;
  }
  EXPECT_EQ(error_of("name: q\nworkloads: [8p]\nevaluation: {timeout_s: 86400}\n"), "");
}

TEST(RunConfig, DuplicateSeedsAreRefused) {
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nseeds: [1, 2, 1]\n").find("seeds: '1' is listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nevaluation: {input_seeds: [3, 3]}\n")
                .find("evaluation.input_seeds: '3' is listed twice"),
            std::string::npos);
}

TEST(RunConfig, DuplicateKeysAreRefusedWithTheirLine) {
  auto err = error_of("name: q\nworkloads: [8p]\nbudget_per_workload: 3\nbudget_per_workload: 9\n");
  EXPECT_NE(err.find("test.yaml: budget_per_workload: is given twice (line 4)"), std::string::npos)
      << err;
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nagents:\n  local: 1\n  local: 2\n")
                .find("agents.local: is given twice"),
            std::string::npos);
}

TEST(RunConfig, IntegersOutOfRangeNameTheirRange) {
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nbudget_per_workload: 0\n")
                .find("budget_per_workload: must be between 1 and"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nagents: {local: -1}\n").find("agents.local: must be between"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nbudget_per_workload: 1e300\n")
                .find("budget_per_workload: has the wrong type"),
            std::string::npos);
}

TEST(RunConfig, QuickstartConfigIsValid) {
  auto c = load_run_config(std::string(PALLADIUM_SOURCE_DIR) + "/configs/quickstart.yaml");
  EXPECT_EQ(c.workloads.size(), 5u);
  EXPECT_GE(c.agents.local, 1);
}

TEST(RunConfig, MissingFileIsAClearError) {
  EXPECT_THROW(load_run_config("/nonexistent/x.yaml"), ConfigError);
}

}  // namespace
}  // namespace palladium
