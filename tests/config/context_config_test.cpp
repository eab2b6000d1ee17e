#include "config/context_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "config/run_config.hpp"
#include "coordinator/run_setup.hpp"
#include "tests/config/config_error.hpp"

namespace palladium {
namespace {

const std::filesystem::path kHome(PALLADIUM_SOURCE_DIR);

std::string error_of(const std::string& yaml) { return testing::config_error_of(yaml); }

TEST(ContextConfig, DefaultsToAllFourBlocks) {
  auto c = parse_run_config("name: q\nworkloads: [8p]\n", "t");
  EXPECT_EQ(c.context.blocks, context_block_names());
  auto some = parse_run_config("name: q\nworkloads: [8p]\ncontext: {blocks: [rules, api]}\n", "t");
  EXPECT_EQ(some.context.blocks, (std::vector<std::string>{"rules", "api"}));
}

TEST(ContextConfig, BadBlocksNameTheKey) {
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\ncontext: {blocks: [api, hints]}\n")
                .find("test.yaml: context.blocks: unknown block 'hints'"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\ncontext: {blocks: [api, api]}\n").find("twice"),
            std::string::npos);
  EXPECT_NE(error_of("name: q\nworkloads: [8p]\ncontext: {block: [api]}\n")
                .find("context.block: unknown key"),
            std::string::npos);
  ConfigReader r("test.yaml");
  YAML::Node empty = YAML::Load("{blocks: []}");
  EXPECT_TRUE(parse_context_config(r, empty, "iterative").blocks.empty());
  try {
    parse_context_config(r, empty, "iterative_context");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("context.blocks: must name at least one block"),
              std::string::npos);
  }
}

TEST(ContextConfig, SearchSpecsCarryTheAssembledBlocks) {
  auto c = parse_run_config(
      "name: q\nworkloads: [8p, 1p]\nllm: {provider: synthetic}\ncontext: {blocks: [api]}\n", "t");
  auto specs = search_specs(c, "t", kHome);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(context_blocks_in(specs[0].brief.context), (std::vector<std::string>{"api"}));
  EXPECT_NE(specs[1].brief.context.find("## Context (api)"), std::string::npos);
  EXPECT_NE(specs[1].brief.context.find("online softmax over key blocks"), std::string::npos);  // attention only
  EXPECT_EQ(specs[0].brief.context.find("online softmax over key blocks"), std::string::npos);
}

TEST(ContextConfig, SyntheticProviderNeedsAFamilyForEachWorkload) {
  auto c = parse_run_config("name: q\nworkloads: [8p, 25k]\nllm: {provider: synthetic}\n", "t");
  try {
    search_specs(c, "t", kHome);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel family for '25k'"), std::string::npos)
        << e.what();
  }
  auto ok = parse_run_config("name: q\nworkloads: [8p]\nllm: {provider: synthetic}\n", "t");
  auto provider = make_provider(ok.llm, "t", kHome);
  EXPECT_EQ(provider->name(), "synthetic");
}

}  // namespace
}  // namespace palladium
