#include "llm/synthetic_model.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "llm/code_extractor.hpp"
#include "llm/context_blocks.hpp"
#include "search/iterative_search.hpp"

namespace palladium {

void PrintTo(const Variant& v, std::ostream* os) { *os << v.describe(); }

namespace {

namespace fs = std::filesystem;

const fs::path kHome(PALLADIUM_SOURCE_DIR);
const fs::path kSynthetic = kHome / "llm" / "synthetic";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

WorkloadBrief brief_for(const std::string& id, bool with_context) {
  WorkloadBrief b;
  b.id = id;
  b.name = id;
  b.baseline_source = read(kHome / "workloads" / ("wl_" + id + ".py"));
  if (with_context) {
    b.context = ContextLibrary::load(kHome / "workloads" / "context")
                    .assemble(id, context_block_names())
                    .text;
  }
  return b;
}

ChatRequest request(const std::string& workload, SampleRole role, const std::string& system,
                    const std::string& user, int sample = 0, uint64_t seed = 0) {
  ChatRequest r;
  r.workload_id = workload;
  r.role = role;
  r.system_prompt = system;
  r.user_prompt = user;
  r.sample_index = sample;
  r.seed = seed;
  return r;
}

// The verdict a variant is meant to get, as the simulation's stand-in for a real evaluation
// (the real verdicts are checked by tests/llm/test_synthetic_families.py): the earliest stage a
// slip fails at.
EvalOutcome intended(const KernelFamily& fam, const std::optional<Variant>& v) {
  EvalOutcome o;
  if (!v) {
    o.verdict = Verdict::no_code;
    o.stage = "extract";
    o.error = "no code was extracted from the response";
    return o;
  }
  std::set<Slip> slips;
  for (const auto& id : v->mistakes) slips.insert(fam.find_mistake(id)->slip);
  if (slips.count(Slip::api)) {
    o.verdict = Verdict::api_misuse;
    o.stage = "trace";
  } else if (slips.count(Slip::tiling)) {
    o.verdict = Verdict::lowering_error;
    o.stage = "lower";
  } else if (slips.count(Slip::loop)) {
    o.verdict = Verdict::timeout;
    o.stage = "numerics";
  } else if (slips.count(Slip::logic)) {
    o.verdict = Verdict::numerics_mismatch;
    o.stage = "numerics";
  } else {
    o.verdict = Verdict::correct;
    o.stage = "done";
    o.kernel_ms = 100.0;
    o.baseline_ms = 2.0;
    o.timing_kind = "cpu-wall";
    return o;
  }
  o.error = "simulated failure";
  return o;
}

struct Tally {
  int correct = 0, total = 0;
  int after_correct = 0, correct_after_correct = 0;
  double rate() const { return total ? static_cast<double>(correct) / total : 0; }
};

// The iterative loop with the model's intended outcomes, over every covered workload.
void simulate_iterative(bool with_context, int seeds, int budget, Tally* t) {
  SyntheticModel model(kSynthetic);
  for (const auto& w : synthetic_workloads(kSynthetic)) {
    const KernelFamily& fam = *model.family(w);
    for (int seed = 0; seed < seeds; ++seed) {
      IterativeConfig config;
      config.with_context = with_context;
      IterativeSearch search(brief_for(w, with_context), Budget(budget), config);
      while (!search.done()) {
        auto reqs = search.propose(1);
        ASSERT_FALSE(reqs.empty());
        for (const auto& req : reqs) {
          SyntheticAnswer a = model.answer(request(w, req.role, req.system_prompt,
                                                   req.user_prompt, req.sample_index,
                                                   static_cast<uint64_t>(seed)));
          EvalOutcome o = intended(fam, a.variant);
          if (req.user_prompt.find("Verdict: correct") != std::string::npos) {
            ++t->after_correct;
            t->correct_after_correct += o.verdict == Verdict::correct;
          }
          t->correct += o.verdict == Verdict::correct;
          ++t->total;
          search.observe(req.sample_index, Observation{a.text, extract_code(a.text), o});
        }
      }
    }
  }
}

TEST(SyntheticModelTest, SlipRatesLandNearTheStudy) {
  // The study: 5.8% per-sample correctness without context, 37.3% with it.
  Tally plain, context;
  simulate_iterative(false, 12, 8, &plain);
  simulate_iterative(true, 12, 8, &context);
  std::cout << "iterative: " << plain.correct << "/" << plain.total << " correct ("
            << plain.correct_after_correct << "/" << plain.after_correct
            << " after a correct one); iterative + context: " << context.correct << "/"
            << context.total << " (" << context.correct_after_correct << "/"
            << context.after_correct << ")\n";
  EXPECT_GT(plain.rate(), 0.03) << plain.correct << "/" << plain.total;
  EXPECT_LT(plain.rate(), 0.09) << plain.correct << "/" << plain.total;
  EXPECT_GT(context.rate(), 0.31) << context.correct << "/" << context.total;
  EXPECT_LT(context.rate(), 0.44) << context.correct << "/" << context.total;
}

TEST(SyntheticModelTest, DeterministicForSeedAndPrompt) {
  SyntheticModel a(kSynthetic), b(kSynthetic);
  auto brief = brief_for("8p", false);
  const std::string sys = iterative_system_prompt();
  const std::string user = iterative_user_prompt(brief, std::nullopt);
  std::set<std::string> texts;
  for (int i = 0; i < 20; ++i) {
    auto r = request("8p", SampleRole::code, sys, user, i, 7);
    EXPECT_EQ(a.answer(r).text, b.answer(r).text);
    texts.insert(a.answer(r).text);
  }
  EXPECT_GT(texts.size(), 5u);  // samples differ
  auto r0 = request("8p", SampleRole::code, sys, user, 0, 7);
  auto r1 = request("8p", SampleRole::code, sys, user, 0, 8);
  auto r2 = request("8p", SampleRole::code, sys, user + " ", 0, 7);
  std::set<std::string> distinct{a.answer(r0).text, a.answer(r1).text, a.answer(r2).text};
  EXPECT_GE(distinct.size(), 2u);
  auto ans = a.answer(r0);
  EXPECT_EQ(ans.completion_tokens, static_cast<int>((ans.text.size() + 3) / 4));
  EXPECT_EQ(ans.prompt_tokens, static_cast<int>((sys.size() + user.size() + 3) / 4));
}

// Fraction of first attempts that contain a slip of `kind`, and that are clean.
std::pair<double, double> slip_fraction(SyntheticModel& model, const std::string& w,
                                        const std::string& system, Slip kind) {
  const KernelFamily& fam = *model.family(w);
  const std::string user = iterative_user_prompt(brief_for(w, false), std::nullopt);
  int with = 0, clean = 0, n = 400;
  for (int i = 0; i < n; ++i) {
    auto a = model.answer(request(w, SampleRole::code, system, user, i));
    if (!a.variant) continue;
    clean += a.variant->mistakes.empty();
    for (const auto& id : a.variant->mistakes) {
      if (fam.find_mistake(id)->slip == kind) {
        ++with;
        break;
      }
    }
  }
  return {static_cast<double>(with) / n, static_cast<double>(clean) / n};
}

TEST(SyntheticModelTest, ContextBlocksMakeTheirSlipsRarer) {
  SyntheticModel model(kSynthetic);
  auto lib = ContextLibrary::load(kHome / "workloads" / "context");
  const std::string plain = iterative_system_prompt();
  const std::string api = iterative_system_prompt(lib.assemble("8p", {"api"}).text);
  const std::string hw = iterative_system_prompt(lib.assemble("8p", {"hardware"}).text);
  const std::string all = iterative_system_prompt(lib.assemble("8p", context_block_names()).text);
  auto [api_plain, clean_plain] = slip_fraction(model, "8p", plain, Slip::api);
  auto [api_api, clean_api] = slip_fraction(model, "8p", api, Slip::api);
  EXPECT_LT(api_api, api_plain * 0.8) << api_api << " vs " << api_plain;
  auto [tiling_plain, c1] = slip_fraction(model, "8p", plain, Slip::tiling);
  auto [tiling_hw, c2] = slip_fraction(model, "8p", hw, Slip::tiling);
  EXPECT_LT(tiling_hw, tiling_plain * 0.8) << tiling_hw << " vs " << tiling_plain;
  auto [unused, clean_all] = slip_fraction(model, "8p", all, Slip::api);
  EXPECT_GT(clean_all, clean_plain * 3) << clean_all << " vs " << clean_plain;
}

std::string feedback_prompt(const std::string& w, const std::string& code, Verdict v) {
  Feedback fb;
  fb.sample_index = 0;
  fb.code = code;
  fb.outcome.verdict = v;
  fb.outcome.stage = v == Verdict::correct ? "done" : "numerics";
  if (v == Verdict::correct) {
    fb.outcome.kernel_ms = 50;
    fb.outcome.baseline_ms = 1;
    fb.outcome.timing_kind = "cpu-wall";
  } else {
    fb.outcome.error = "seed 0: 12 of 65536 elements exceed atol";
  }
  return iterative_user_prompt(brief_for(w, false), fb);
}

TEST(SyntheticModelTest, RepairMovesTowardAWorkingVariant) {
  SyntheticModel model(kSynthetic);
  const KernelFamily& fam = *model.family("41k");
  Variant broken{"gemm_ktiled", {{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 128}},
                 {"bias_each_k_step"}};
  const std::string user = feedback_prompt("41k", fam.render(broken), Verdict::numerics_mismatch);
  auto lib = ContextLibrary::load(kHome / "workloads" / "context");
  const std::string with_ctx =
      iterative_system_prompt(lib.assemble("41k", context_block_names()).text);
  int fixed_plain = 0, fixed_ctx = 0, same_tiling = 0, n = 200;
  for (int i = 0; i < n; ++i) {
    auto a = model.answer(request("41k", SampleRole::code, iterative_system_prompt(), user, i));
    ASSERT_TRUE(a.variant);  // a repair always answers with code
    const auto& m = a.variant->mistakes;
    fixed_plain += std::find(m.begin(), m.end(), "bias_each_k_step") == m.end();
    same_tiling += a.variant->params == broken.params && a.variant->tmpl == broken.tmpl;
    auto b = model.answer(request("41k", SampleRole::repair, with_ctx, user, i));
    const auto& mb = b.variant->mistakes;
    fixed_ctx += std::find(mb.begin(), mb.end(), "bias_each_k_step") == mb.end();
  }
  EXPECT_GT(fixed_plain, n * 0.18);  // each slip is fixed with p = 0.27 without context
  EXPECT_GT(fixed_ctx, fixed_plain);
  EXPECT_EQ(same_tiling, n);  // a repair keeps the layout and tiling it was given
}

TEST(SyntheticModelTest, OptimiseMovesToANeighbourInBothDirections) {
  SyntheticModel model(kSynthetic);
  const KernelFamily& fam = *model.family("8p");
  Variant good{"gemm_ktiled", {{"BLOCK_M", 256}, {"BLOCK_N", 256}, {"BLOCK_K", 256}}, {}};
  const std::string user = feedback_prompt("8p", fam.render(good), Verdict::correct);
  int up = 0, down = 0, other_layout = 0, n = 200;
  for (int i = 0; i < n; ++i) {
    auto a = model.answer(request("8p", SampleRole::code, iterative_system_prompt(), user, i));
    ASSERT_TRUE(a.variant);
    if (a.variant->tmpl != good.tmpl) {
      ++other_layout;
      continue;
    }
    int changed = 0;
    for (const auto& [k, v] : a.variant->params) {
      if (v == good.params.at(k)) continue;
      ++changed;
      (v > good.params.at(k) ? up : down) += 1;
    }
    EXPECT_EQ(changed, 1) << a.variant->describe();
  }
  EXPECT_GT(up, down);
  EXPECT_GT(down, 0);
  EXPECT_GT(other_layout, 0);
}

TEST(SyntheticModelTest, ScoresTranslationCompleteness) {
  SyntheticModel model(kSynthetic);
  const KernelFamily& fam = *model.family("41k");
  Variant full{"gemm_ktiled", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}}, {}};
  Variant partial{"gemm_xla_epilogue", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}}, {}};
  EXPECT_EQ(translation_score(fam.render(full)), 10);
  EXPECT_EQ(translation_score(fam.render(partial)), 8);
  EXPECT_EQ(translation_score("def workload(x, w, b):\n    return jnp.maximum(x @ w + b, 0)\n"), 1);
  EXPECT_EQ(translation_score(""), 0);
  const std::string user = "Rate how completely this code is translated to Pallas.\n\n```python\n" +
                           fam.render(partial) + "```\nAnswer with a line SCORE: <0-10>.\n";
  auto a = model.answer(request("41k", SampleRole::score, "", user));
  EXPECT_NE(a.text.find("\nSCORE: 8\n"), std::string::npos) << a.text;
  EXPECT_FALSE(a.variant);
}

TEST(SyntheticModelTest, PlansComeFromTheMenuAndImplementationsFollowThem) {
  SyntheticModel model(kSynthetic);
  const KernelFamily& fam = *model.family("8p");
  Variant parent{"gemm_ktiled", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}}, {}};
  const std::string code = fam.render(parent);
  const std::string plan_prompt =
      "The code to optimise:\n\n```python\n" + code +
      "```\n\nIts latency was 50 ms. Choose one of these strategies:\n"
      "1. Loop tiling\n2. Fuse operations\n3. Double buffering\n\n"
      "Rules:\n1. Keep the workload signature.\n";
  const std::vector<std::string> menu{"Loop tiling", "Fuse operations", "Double buffering"};
  EXPECT_EQ(strategies_in(plan_prompt), menu);
  // docs/prompts.md puts menus between <strategies> tags; other lists around them are not menus.
  EXPECT_EQ(strategies_in("Rules:\n1. Keep it.\n<strategies>\n1. Loop tiling\n2. Fuse operations\n"
                          "3. Double buffering\n</strategies>\n1. Another rule\n"),
            menu);
  std::set<std::string> chosen;
  for (int i = 0; i < 30; ++i) {
    auto plan = model.answer(request("8p", SampleRole::plan, "", plan_prompt, i));
    ASSERT_EQ(plan.text.rfind("Strategy: ", 0), 0u) << plan.text;
    const std::string strategy = plan.text.substr(10, plan.text.find('\n') - 10);
    EXPECT_NE(std::find(menu.begin(), menu.end(), strategy), menu.end()) << strategy;
    chosen.insert(strategy);
    ASSERT_NE(plan.text.find("Tiling after this change: "), std::string::npos);
    const std::string impl_prompt = "Parent code:\n\n```python\n" + code +
                                    "```\n\nRewrite it following this plan:\n" + plan.text;
    auto impl = model.answer(request("8p", SampleRole::code, "", impl_prompt, i));
    ASSERT_TRUE(impl.variant);
    // The implementation has the planned tiling (its slips aside).
    const std::string line = plan.text.substr(plan.text.find("Tiling after this change: "));
    EXPECT_NE(line.find("kernel layout: " + impl.variant->tmpl + ")"), std::string::npos);
    for (const auto& [k, v] : impl.variant->params) {
      EXPECT_NE(line.find(k + "=" + std::to_string(v)), std::string::npos) << line;
    }
  }
  EXPECT_GE(chosen.size(), 2u);
}

TEST(SyntheticModelTest, MenusListNewStrategiesOnePerLine) {
  SyntheticModel model(kSynthetic);
  const std::string quoted =
      "Reduce grid steps: fewer, larger blocks amortise the fixed per-step cost.";
  auto a = model.answer(request("8p", SampleRole::menu, "",
                                "Current strategies:\n- " + quoted +
                                    "\n\nList about 10 new strategies, one per line.\n"));
  int lines = 0;
  std::istringstream in(a.text);
  std::string line;
  std::getline(in, line);  // the lead-in
  std::getline(in, line);
  EXPECT_EQ(line, "<strategies>");
  while (std::getline(in, line) && line != "</strategies>") {
    ASSERT_EQ(line.rfind("- ", 0), 0u) << line;
    EXPECT_NE(line.substr(2), quoted);
    ++lines;
  }
  EXPECT_EQ(line, "</strategies>");
  EXPECT_GE(lines, 8);
  EXPECT_LE(lines, 10);
}

TEST(SyntheticModelTest, WorkloadWithoutAFamilyGetsNoCode) {
  SyntheticModel model(kSynthetic);
  EXPECT_EQ(model.family("25k"), nullptr);
  auto a = model.answer(request("25k", SampleRole::code, iterative_system_prompt(),
                                iterative_user_prompt(brief_for("25k", false), std::nullopt)));
  EXPECT_EQ(extract_code(a.text), "");
  EXPECT_NE(a.text.find("synthetic"), std::string::npos);
}

TEST(SyntheticModelTest, SomeFirstAttemptsAreQuestionsWithoutCode) {
  SyntheticModel model(kSynthetic);
  const std::string user = iterative_user_prompt(brief_for("12p", false), std::nullopt);
  int questions = 0;
  for (int i = 0; i < 200; ++i) {
    auto a = model.answer(request("12p", SampleRole::code, iterative_system_prompt(), user, i));
    if (!a.variant) {
      ++questions;
      EXPECT_EQ(extract_code(a.text), "");
    } else {
      EXPECT_EQ(extract_code(a.text), model.family("12p")->render(*a.variant));
    }
  }
  EXPECT_GT(questions, 5);
  EXPECT_LT(questions, 50);
}

}  // namespace
}  // namespace palladium
