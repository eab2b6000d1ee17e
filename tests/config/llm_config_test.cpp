#include "config/llm_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "config/run_config.hpp"
#include "coordinator/run_setup.hpp"
#include "tests/config/config_error.hpp"

namespace palladium {
namespace {

const std::filesystem::path kHome(PALLADIUM_SOURCE_DIR);

std::string error_of(const std::string& yaml) { return testing::config_error_of(yaml); }

std::string search_error_of(const std::string& yaml) {
  auto c = parse_run_config(yaml, "t");
  try {
    search_specs(c, "t", kHome);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(LlmConfig, SyntheticRefusesUncoveredWorkloadsByDefault) {
  auto c = parse_run_config("name: q\nworkloads: [8p]\nllm: {provider: synthetic}\n", "t");
  EXPECT_EQ(c.llm.synthetic_uncovered, "refuse");
  const std::string e =
      search_error_of("name: q\nworkloads: [8p, 25k]\nllm: {provider: synthetic}\n");
  EXPECT_NE(e.find("no kernel family for '25k'"), std::string::npos) << e;
  EXPECT_NE(e.find("llm.synthetic.uncovered: no_code"), std::string::npos) << e;
  EXPECT_NE(search_error_of("name: q\nworkloads: [8p, 25k]\n"
                            "llm: {provider: synthetic, synthetic: {uncovered: refuse}}\n")
                .find("no kernel family for '25k'"),
            std::string::npos);
}

TEST(LlmConfig, SyntheticNoCodeAcceptsEveryWorkload) {
  const std::string yaml =
      "name: q\nworkloads: [8p, 25k, 50k]\nllm: {provider: synthetic, synthetic: {uncovered: "
      "no_code}}\n";
  auto c = parse_run_config(yaml, "t");
  EXPECT_EQ(c.llm.synthetic_uncovered, "no_code");
  auto specs = search_specs(c, "t", kHome);
  EXPECT_EQ(specs.size(), 3u);
}

TEST(LlmConfig, BadSyntheticOptionsNameTheKey) {
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\n"
                     "llm: {provider: synthetic, synthetic: {uncovered: correct}}\n")
                .find("llm.synthetic.uncovered: 'correct' is neither refuse nor no_code"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\n"
                     "llm: {provider: synthetic, synthetic: {covered: no_code}}\n")
                .find("llm.synthetic.covered: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\nllm: {provider: synthetic, synthetic: no_code}\n")
                .find("llm.synthetic"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\n"
                     "llm: {provider: replay, synthetic: {uncovered: no_code}}\n")
                .find("llm.synthetic: applies only to provider synthetic, not 'replay'"),
            std::string::npos);
}

TEST(LlmConfig, GovernorDeadlineAndRealServerKeys) {
  auto c = parse_run_config(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: gpt-5-mini, max_usd_per_10min: "
      "10, call_deadline_s: 900, fold_system_prompt: true, send_seed: false, prompt_shortfall: "
      "warn, adaptive_concurrency: false}\n",
      "t");
  ASSERT_TRUE(c.llm.max_usd_per_window);
  EXPECT_DOUBLE_EQ(*c.llm.max_usd_per_window, 10.0);
  EXPECT_DOUBLE_EQ(c.llm.spend_window_s, 600.0);
  ASSERT_TRUE(c.llm.call_deadline_s);
  EXPECT_DOUBLE_EQ(*c.llm.call_deadline_s, 900.0);
  EXPECT_TRUE(c.llm.fold_system_prompt);
  EXPECT_FALSE(c.llm.send_seed);
  EXPECT_EQ(c.llm.prompt_shortfall, "warn");
  EXPECT_FALSE(c.llm.adaptive_concurrency);
  auto w = parse_run_config(
      "name: q\nworkloads: [8p]\nllm: {provider: gemini, model: gemini-2.5-flash, "
      "max_usd_per_window: 200, spend_window_s: 60}\n",
      "t");
  EXPECT_DOUBLE_EQ(*w.llm.max_usd_per_window, 200.0);
  EXPECT_DOUBLE_EQ(w.llm.spend_window_s, 60.0);
}

TEST(LlmConfig, BadGovernorKeysNameTheKey) {
  const std::string both = error_of(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, max_usd_per_10min: 1, "
      "max_usd_per_window: 1}\n");
  EXPECT_NE(both.find("llm.max_usd_per_10min"), std::string::npos) << both;
  const std::string shortfall = error_of(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, prompt_shortfall: maybe}\n");
  EXPECT_NE(shortfall.find("llm.prompt_shortfall"), std::string::npos) << shortfall;
  const std::string deadline = error_of(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, call_deadline_s: 0}\n");
  EXPECT_NE(deadline.find("llm.call_deadline_s"), std::string::npos) << deadline;
}

TEST(LlmConfig, BatchModeNamesWhichRolesGoInJobsAndWhichMethodsStayOnline) {
  auto c = parse_run_config(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, mode: batch, "
      "batch_roles: [code, repair], online_methods: [iterative]}\n",
      "t");
  EXPECT_EQ(c.llm.batch_roles, (std::vector<std::string>{"code", "repair"}));
  EXPECT_EQ(c.llm.online_methods, (std::vector<std::string>{"iterative"}));
  const std::string role = error_of(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, mode: batch, "
      "batch_roles: [cod]}\n");
  EXPECT_NE(role.find("llm.batch_roles: 'cod' is not a sample role"), std::string::npos) << role;
  const std::string online = error_of(
      "name: q\nworkloads: [8p]\nllm: {provider: openai, model: m, online_methods: [iterative]}\n");
  EXPECT_NE(online.find("llm.online_methods: only means something with llm.mode: batch"),
            std::string::npos)
      << online;
}

}  // namespace
}  // namespace palladium
