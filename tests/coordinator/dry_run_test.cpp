#include "coordinator/dry_run.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "config/run_config.hpp"
#include "coordinator/run_setup.hpp"
#include "llm/synthetic_provider.hpp"
#include "llm/token_estimate.hpp"
#include "search/method_config.hpp"

namespace palladium {
namespace {

const std::filesystem::path kHome(PALLADIUM_SOURCE_DIR);

std::vector<WorkloadSearchSpec> specs_of(const std::string& yaml) {
  return search_specs(parse_run_config(yaml, "dry.yaml"), "dry.yaml", kHome);
}

std::unique_ptr<Strategy> strategy_of(const WorkloadSearchSpec& spec) {
  return make_strategy(spec.method, spec.brief, Budget(spec.budget, spec.method.counts), spec.menus,
                       spec.seed);
}

// Answers from a script and keeps every request, to see what the strategy was told.
class ScriptedProvider : public Provider {
 public:
  explicit ScriptedProvider(std::vector<std::string> answers) : answers_(std::move(answers)) {}
  ChatResponse complete(const ChatRequest& request) override {
    requests.push_back(request);
    ChatResponse r;
    r.text = answers_[(requests.size() - 1) % answers_.size()];
    r.model = "scripted";
    r.prompt_tokens = estimate_tokens(request.system_prompt.size() + request.user_prompt.size());
    r.completion_tokens = estimate_tokens(r.text.size());
    return r;
  }
  std::string name() const override { return "scripted"; }
  std::vector<ChatRequest> requests;

 private:
  std::vector<std::string> answers_;
};

TEST(DryRun, SpendsTheWholeBudgetOnTheSyntheticModelAndCountsRealPrompts) {
  auto specs = specs_of(
      "name: d\nworkloads: [8p, 12p]\nseeds: [0, 1]\nbudget_per_workload: 5\n"
      "llm: {provider: synthetic}\n");
  ASSERT_EQ(specs.size(), 4u);
  auto model = make_synthetic_provider(kHome / "llm" / "synthetic");
  for (const auto& spec : specs) {
    auto strategy = strategy_of(spec);
    DryRunSearch d = dry_run_search(*strategy, spec.brief.id, spec.seed, *model, true);
    EXPECT_EQ(d.workload, spec.brief.id);
    EXPECT_EQ(d.method, "iterative");
    EXPECT_EQ(d.budget_spent, 5);
    EXPECT_EQ(d.samples[SampleRole::code], 5);
    EXPECT_EQ(d.calls(), 5);
    EXPECT_TRUE(strategy->done());
    // Every prompt quotes the baseline module, so the estimate cannot be below that.
    EXPECT_GE(d.usage.prompt_tokens, 5 * estimate_tokens(spec.brief.baseline_source.size()));
    EXPECT_GT(d.usage.completion_tokens, 0);
    EXPECT_TRUE(d.usage.estimated);
  }
}

TEST(DryRun, IsDeterministic) {
  auto specs = specs_of("name: d\nworkloads: [1p]\nbudget_per_workload: 4\n"
                        "llm: {provider: synthetic}\n");
  auto model = make_synthetic_provider(kHome / "llm" / "synthetic");
  auto a = dry_run_search(*strategy_of(specs[0]), "1p", 0, *model, true);
  auto b = dry_run_search(*strategy_of(specs[0]), "1p", 0, *model, true);
  EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens);
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
}

TEST(DryRun, TellsTheStrategyNothingWasEvaluated) {
  auto specs = specs_of("name: d\nworkloads: [8p]\nbudget_per_workload: 3\n");
  ScriptedProvider model({"I need more detail first.",
                          "```python\nimport jax\ndef workload(a, b):\n  return a @ b\n```\n"});
  auto strategy = strategy_of(specs[0]);
  auto d = dry_run_search(*strategy, "8p", 0, model, false);
  ASSERT_EQ(model.requests.size(), 3u);
  EXPECT_EQ(d.calls(), 3);
  EXPECT_EQ(model.requests[0].method, "iterative");
  // The answer without code is what extraction says it is; the one with code is
  // reported back as not evaluated, never as a verdict it did not earn.
  EXPECT_NE(model.requests[1].user_prompt.find("Verdict: no_code"), std::string::npos);
  EXPECT_NE(model.requests[2].user_prompt.find("(stage: dry_run)"), std::string::npos);
  EXPECT_NE(model.requests[2].user_prompt.find("not evaluated"), std::string::npos);
  EXPECT_EQ(model.requests[2].user_prompt.find("It is correct"), std::string::npos);
}

TEST(DryRun, TextPricesTheTotalsAndFlagsUncoveredWorkloads) {
  DryRunSearch a;
  a.workload = "8p";
  a.method = "iterative";
  a.budget_spent = 7;
  a.samples[SampleRole::code] = 7;
  a.usage.prompt_tokens = 600000;
  a.usage.completion_tokens = 60000;
  DryRunSearch b = a;
  b.workload = "20k";
  b.model_covers = false;
  b.usage.prompt_tokens = 400000;
  b.usage.completion_tokens = 40000;
  Price price;
  price.input_per_mtok = 0.50;
  price.output_per_mtok = 3.00;
  price.batch_input_per_mtok = 0.25;
  price.batch_output_per_mtok = 1.50;
  price.as_of = "2026-12-01";
  std::string text = dry_run_text({a, b}, "gemini gemini-3-flash-preview", price, "");
  EXPECT_EQ(text.rfind("DRY RUN", 0), 0u) << text;
  // 1M prompt tokens at $0.50 and 100k answer tokens at $3.00.
  EXPECT_NE(text.find("$0.8000"), std::string::npos) << text;
  EXPECT_NE(text.find("batch interface: $0.4000"), std::string::npos) << text;
  EXPECT_NE(text.find("20k*"), std::string::npos) << text;
  EXPECT_NE(text.find("no kernel family"), std::string::npos) << text;
  EXPECT_NE(text.find("1000000"), std::string::npos) << text;  // the prompt total
  std::string unpriced = dry_run_text({a}, "llm.provider replay", std::nullopt, "offline");
  EXPECT_NE(unpriced.find("No dollar estimate: offline"), std::string::npos) << unpriced;
  EXPECT_EQ(unpriced.find("no kernel family"), std::string::npos) << unpriced;
}

TEST(DryRun, ConfigRunsEverySearchAndNeedsNoProvider) {
  auto config = parse_run_config(
      "name: d\nworkloads: [9p, 41k]\nbudget_per_workload: 2\nllm: {provider: replay}\n",
      "dry.yaml");
  auto specs = search_specs(config, "dry.yaml", kHome);
  std::string text = dry_run_config(config, specs, kHome);
  EXPECT_NE(text.find("\n9p "), std::string::npos) << text;
  EXPECT_NE(text.find("\n41k "), std::string::npos) << text;
  EXPECT_NE(text.find("llm.provider replay is offline"), std::string::npos) << text;
}

TEST(DryRun, PricesARemoteConfigWithoutItsKey) {
  ::unsetenv("GEMINI_API_KEY");
  auto config = parse_run_config(
      "name: d\nworkloads: [8p, 20k]\nbudget_per_workload: 2\n"
      "llm: {provider: gemini, model: gemini-3-flash-preview, max_output_tokens: 1000}\n",
      "dry.yaml");
  auto specs = search_specs(config, "dry.yaml", kHome);
  std::string text = dry_run_config(config, specs, kHome);
  EXPECT_NE(text.find("Estimated cost at gemini gemini-3-flash-preview prices"), std::string::npos)
      << text;
  EXPECT_NE(text.find("20k*"), std::string::npos) << text;
  EXPECT_NE(text.find("if every one of the 4 calls wrote llm.max_output_tokens (1000"),
            std::string::npos)
      << text;
}

TEST(DryRun, CeilingPricesEveryCallAtTheOutputLimit) {
  DryRunSearch a;
  a.workload = "8p";
  a.samples[SampleRole::code] = 10;
  a.samples[SampleRole::plan] = 10;
  a.usage.prompt_tokens = 1000000;
  a.usage.completion_tokens = 1000;
  Price price;
  price.input_per_mtok = 1.0;
  price.output_per_mtok = 10.0;
  // 1M prompt tokens at $1 plus 20 calls x 5000 tokens at $10 per Mtok.
  std::string text = dry_run_text({a}, "openai gpt-x", price, "", 5000);
  EXPECT_NE(text.find("At most $2.0000 if every one of the 20 calls"), std::string::npos) << text;
}

// Every config we ship parses and builds its searches, so a key renamed in the
// code cannot silently break a config users copy. The study configs (and their
// offline twins) are driven to their end: each spends exactly its stated
// budget on every workload, with the method it names. The policy configs
// spend something and never more than their budget.
TEST(ShippedConfigs, EveryOneParsesAndTheStudyOnesSpendTheirBudget) {
  int configs = 0, study = 0, policies = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kHome / "configs")) {
    const auto path = entry.path();
    if (path.extension() != ".yaml" || path.filename() == "prices.yaml") continue;
    SCOPED_TRACE(path.string());
    if (path.parent_path().filename() == "sweeps") continue;  // sweep files, not run configs
    configs++;
    RunConfig config;
    std::vector<WorkloadSearchSpec> specs;
    ASSERT_NO_THROW({
      config = load_run_config(path.string());
      specs = search_specs(config, path.string(), kHome);
    });
    ASSERT_FALSE(specs.empty());
    auto model = make_synthetic_provider(kHome / "llm" / "synthetic");
    if (path.parent_path().filename() == "policies") {
      policies++;
      for (const auto& spec : specs) {
        auto strategy = strategy_of(spec);
        DryRunSearch d = dry_run_search(*strategy, spec.brief.id, spec.seed, *model, true);
        EXPECT_GT(d.budget_spent, 0) << spec.brief.id;
        EXPECT_LE(d.budget_spent, spec.budget) << spec.brief.id;
      }
      continue;
    }
    if (path.string().find("/study/") == std::string::npos) continue;
    study++;
    EXPECT_EQ(specs.size(), config.workloads.size() * config.seeds.size());
    // Each is named after its method, except all50.yaml: the iterative loop on all 50 workloads.
    const std::string method = path.stem() == "all50" ? "iterative" : path.stem().string();
    for (const auto& spec : specs) {
      EXPECT_EQ(spec.method.method, method);
      auto strategy = strategy_of(spec);
      DryRunSearch d = dry_run_search(*strategy, spec.brief.id, spec.seed, *model, true);
      EXPECT_EQ(d.budget_spent, spec.budget) << spec.brief.id;
      EXPECT_EQ(d.samples[SampleRole::code] + d.samples[SampleRole::repair], spec.budget)
          << spec.brief.id;
    }
  }
  EXPECT_GE(configs, 10);
  EXPECT_EQ(study, 7);
  EXPECT_EQ(policies, 3);
}

}  // namespace
}  // namespace palladium
