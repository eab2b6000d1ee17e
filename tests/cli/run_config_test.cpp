#include "cli/run_config.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_run_config(yaml, "test.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RunConfig, ParsesAllSections) {
  auto c = parse_run_config(R"(
name: q
workloads: [8p, 41k]
budget_per_workload: 3
seeds: [4, 5]
llm: {provider: replay, corpus: some/dir}
evaluation: {backend: interpret, timeout_s: 12.5, input_seeds: [7], require_pallas: false}
agents: {local: 3, slots_per_agent: 2, listen: "tcp://0.0.0.0:5555", heartbeat_ms: 100, liveness: 3}
)", "t");
  EXPECT_EQ(c.name, "q");
  EXPECT_EQ(c.workloads, (std::vector<std::string>{"8p", "41k"}));
  EXPECT_EQ(c.budget_per_workload, 3);
  EXPECT_EQ(c.seeds, (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(c.llm_corpus, "some/dir");
  EXPECT_DOUBLE_EQ(c.timeout_s, 12.5);
  EXPECT_EQ(c.input_seeds, (std::vector<int64_t>{7}));
  EXPECT_FALSE(c.require_pallas);
  EXPECT_EQ(c.local_agents, 3);
  EXPECT_EQ(c.slots_per_agent, 2);
  EXPECT_EQ(c.listen, "tcp://0.0.0.0:5555");
  EXPECT_EQ(c.heartbeat_ms, 100);
  EXPECT_EQ(c.liveness, 3);
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
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nmethod: autocomp\n").find("not implemented"),
            std::string::npos);
  EXPECT_NE(error_of("name: [unclosed\n").find("YAML syntax error at line"), std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nevaluation: {timeout_s: 0}\n")
                .find("evaluation.timeout_s: must be > 0"),
            std::string::npos);
}

TEST(RunConfig, QuickstartConfigIsValid) {
  auto c = load_run_config(std::string(PALLADIUM_SOURCE_DIR) + "/configs/quickstart.yaml");
  EXPECT_EQ(c.workloads.size(), 5u);
  EXPECT_GE(c.local_agents, 1);
}

TEST(RunConfig, MissingFileIsAClearError) {
  EXPECT_THROW(load_run_config("/nonexistent/x.yaml"), ConfigError);
}

}  // namespace
}  // namespace palladium
