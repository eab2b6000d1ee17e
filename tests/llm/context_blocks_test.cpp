#include "llm/context_blocks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "llm/token_estimate.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

const fs::path kRealContext = fs::path(PALLADIUM_SOURCE_DIR) / "workloads" / "context";

// A small context directory written per test.
class TempContext {
 public:
  TempContext() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("palladium_ctx_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "menus");
    write("hw.md", "HW facts\n");
    write("api_core.md", "core API\n");
    write("api_mm.md", "matmul API\n");
    write("api_att.md", "attention API\n");
    write("ex_mm.py", "def run():\n    pass\n");
    write("rules.md", "rule one\n");
    write("workload_tags.yaml", "8p: [matmul]\n1p: [attention, matmul]\n");
    write("blocks.yaml", kManifest);
  }
  ~TempContext() { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ / rel) << text;
  }
  const fs::path& dir() const { return dir_; }

  static constexpr const char* kManifest = R"(version: 1
tags: [matmul, attention]
blocks:
  hardware:
    title: HW
    sections:
      - {file: hw.md, tags: [all]}
  api:
    title: API
    sections:
      - {file: api_core.md, tags: [all]}
      - {file: api_mm.md, tags: [matmul]}
      - {file: api_att.md, tags: [attention]}
  examples:
    title: Examples
    sections:
      - {file: ex_mm.py, kind: code, tags: [matmul]}
  rules:
    title: Rules
    sections:
      - {file: rules.md, tags: [all]}
)";

 private:
  fs::path dir_;
};

TEST(ContextBlocksTest, SelectsSectionsByWorkloadTagsInManifestOrder) {
  TempContext t;
  auto lib = ContextLibrary::load(t.dir());
  auto gemm = lib.assemble("8p", {"rules", "api", "hardware", "examples"});
  ASSERT_EQ(gemm.blocks.size(), 4u);
  EXPECT_EQ(gemm.blocks[0].name, "hardware");  // canonical order, not the request's
  EXPECT_EQ(gemm.blocks[1].files, (std::vector<std::string>{"api_core.md", "api_mm.md"}));
  EXPECT_EQ(gemm.blocks[2].files, (std::vector<std::string>{"ex_mm.py"}));
  EXPECT_EQ(gemm.text.find("attention API"), std::string::npos);
  EXPECT_NE(gemm.text.find("## Context (api): API\n"), std::string::npos);
  EXPECT_NE(gemm.text.find("### Example: ex_mm.py\n\n```python\ndef run():\n    pass\n```\n"),
            std::string::npos);

  auto attn = lib.assemble("1p", {"api"});
  ASSERT_EQ(attn.blocks.size(), 1u);
  EXPECT_EQ(attn.blocks[0].files,
            (std::vector<std::string>{"api_core.md", "api_mm.md", "api_att.md"}));
}

TEST(ContextBlocksTest, TokenSizesAreTheByteEstimateOfEachBlock) {
  TempContext t;
  auto ctx = ContextLibrary::load(t.dir()).assemble("8p", {"hardware", "rules"});
  ASSERT_EQ(ctx.blocks.size(), 2u);
  for (const auto& b : ctx.blocks) EXPECT_EQ(b.tokens, estimate_tokens(b.text.size()));
  EXPECT_EQ(ctx.tokens(), estimate_tokens(ctx.text.size()));
  EXPECT_EQ(estimate_tokens(0), 0);
  EXPECT_EQ(estimate_tokens(1), 1);
  EXPECT_EQ(estimate_tokens(8), 2);
}

TEST(ContextBlocksTest, EmptySelectionIsEmptyContext) {
  TempContext t;
  auto ctx = ContextLibrary::load(t.dir()).assemble("8p", {});
  EXPECT_TRUE(ctx.blocks.empty());
  EXPECT_EQ(ctx.text, "");
}

TEST(ContextBlocksTest, HeadingsAreDetectedInPrompts) {
  TempContext t;
  auto ctx = ContextLibrary::load(t.dir()).assemble("8p", {"api", "rules"});
  EXPECT_EQ(context_blocks_in("You are an expert.\n" + ctx.text),
            (std::vector<std::string>{"api", "rules"}));
  EXPECT_TRUE(context_blocks_in("no context here").empty());
  EXPECT_EQ(context_block_heading("hardware", "TPU v6e"), "## Context (hardware): TPU v6e");
}

TEST(ContextBlocksTest, BadRequestsNameTheProblem) {
  TempContext t;
  auto lib = ContextLibrary::load(t.dir());
  try {
    lib.assemble("8p", {"api", "hints"});
    FAIL();
  } catch (const ContextError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown block 'hints'"), std::string::npos);
  }
  EXPECT_THROW(lib.assemble("8p", {"api", "api"}), ContextError);
  try {
    lib.assemble("99p", {"api"});
    FAIL();
  } catch (const ContextError& e) {
    EXPECT_NE(std::string(e.what()).find("no tags for workload '99p'"), std::string::npos);
  }
  EXPECT_EQ(check_block_names({"hardware", "rules"}), "");
  EXPECT_NE(check_block_names({"rules", "rules"}).find("twice"), std::string::npos);
}

TEST(ContextBlocksTest, BadManifestsNameFileAndKey) {
  auto expect_error = [](TempContext& t, const std::string& needle) {
    try {
      ContextLibrary::load(t.dir());
      ADD_FAILURE() << "no error for " << needle;
    } catch (const ContextError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    TempContext t;
    t.write("blocks.yaml", std::string(TempContext::kManifest) + "  extra: [\n");
    expect_error(t, "YAML syntax error");
  }
  {
    TempContext t;
    std::string m = TempContext::kManifest;
    m.replace(m.find("tags: [matmul]}"), 15, "tags: [gemm]}");
    t.write("blocks.yaml", m);
    expect_error(t, "blocks.api.sections[1].tags: unknown tag 'gemm'");
  }
  {
    TempContext t;
    std::string m = TempContext::kManifest;
    m.replace(m.find("api_att.md"), 10, "../secret.md");
    t.write("blocks.yaml", m);
    expect_error(t, "must stay inside");
  }
  {
    TempContext t;
    fs::remove(t.dir() / "api_mm.md");
    expect_error(t, "api_mm.md: cannot read the file");
  }
  {
    TempContext t;
    t.write("workload_tags.yaml", "8p: [matmul, fft]\n");
    expect_error(t, "workload_tags.yaml: 8p: unknown tag 'fft'");
  }
}

TEST(ContextBlocksTest, MenusAcceptListsAndAutocompFiles) {
  TempContext t;
  t.write("menus/plain.yaml", "- tile bigger\n- fuse the epilogue\n");
  t.write("menus/autocomp.yaml",
          "optimizations:\n  - strategy: double buffering\n  - strategy: loop tiling\n");
  t.write("menus/empty.yaml", "strategies: []\n");
  t.write("menus/bad.yaml", "strategies:\n  - {name: x}\n");
  EXPECT_EQ(load_menu(t.dir(), "plain"),
            (std::vector<std::string>{"tile bigger", "fuse the epilogue"}));
  EXPECT_EQ(load_menu(t.dir(), "autocomp"),
            (std::vector<std::string>{"double buffering", "loop tiling"}));
  EXPECT_THROW(load_menu(t.dir(), "empty"), ContextError);
  EXPECT_THROW(load_menu(t.dir(), "bad"), ContextError);
  EXPECT_THROW(load_menu(t.dir(), "missing"), ContextError);
  EXPECT_THROW(load_menu(t.dir(), "../blocks"), ContextError);
}

// The real blocks: every workload gets all four, and the sizes stay modest.
TEST(ContextBlocksTest, RealContextCoversEveryWorkload) {
  auto lib = ContextLibrary::load(kRealContext);
  ASSERT_EQ(lib.workload_tags().size(), 50u);
  for (const auto& [id, tags] : lib.workload_tags()) {
    auto ctx = lib.assemble(id, context_block_names());
    ASSERT_EQ(ctx.blocks.size(), 4u) << id;
    for (const auto& b : ctx.blocks) EXPECT_GT(b.tokens, 100) << id << " " << b.name;
    // The whole context stays well inside any model's window.
    EXPECT_LT(ctx.tokens(), 20000) << id;
  }
  auto gemm = lib.assemble("8p", {"api"});
  bool has_attention = false;
  for (const auto& f : gemm.blocks[0].files) has_attention |= f == "api/attention.md";
  EXPECT_FALSE(has_attention);
}

}  // namespace
}  // namespace palladium
