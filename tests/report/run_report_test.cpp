#include "report/run_report.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <fstream>

#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

// Builds a small run: candidates with given verdicts and speedups.
class RunReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = RunStore::open(tmp_.path());
    run_ = store_->begin_or_resume_run("unit", "workloads: [8p, 9p, 12p]");
  }

  // Adds candidate `index` of `workload`; evaluates it unless `verdict` is
  // nullopt.
  void add(const std::string& workload, int index,
           std::optional<Verdict> verdict, std::optional<double> speedup = {},
           const std::string& timing = "cpu-wall", Phase phase = Phase::iterate,
           const std::string& numerics_path = "",
           const std::function<void(Evaluation&)>& facts = {}) {
    SampleRecord c;
    c.run_id = run_;
    c.workload = workload;
    c.method = phase == Phase::iterate ? "iterative" : "autocomp";
    c.phase = phase;
    c.sample_index = index;
    c.code = "code";
    const int64_t id = store_->put_sample(c).id;
    if (!verdict) return;
    EvaluationRecord e;
    e.candidate_id = id;
    e.evaluation.verdict = *verdict;
    if (speedup) {  // a timed candidate: the store computes the speedup from the times
      e.evaluation.kernel_ms = 1.0;
      e.evaluation.baseline_ms = *speedup;
    }
    e.evaluation.timing_kind = timing_kind_from_string(timing);
    e.evaluation.numerics_path = numerics_path_from_string(numerics_path);
    if (facts) facts(e.evaluation);
    ASSERT_TRUE(store_->put_evaluation(e));
  }

  TempDb tmp_;
  std::unique_ptr<RunStore> store_;
  int64_t run_ = 0;
};

TEST_F(RunReportTest, JsonNumbersEqualWhatWasInserted) {
  add("8p", 0, Verdict::numerics_mismatch);
  add("8p", 1, Verdict::correct, 1.25);
  add("8p", 2, Verdict::correct, 2.5);
  add("9p", 0, Verdict::no_code);
  add("9p", 1, Verdict::correct, 0.8);  // slower than XLA
  store_->finish_run(run_, "finished");

  const nlohmann::json r = report_json(*store_, run_, {"8p", "9p", "12p"});

  EXPECT_EQ(r["run"]["id"], run_);
  EXPECT_EQ(r["run"]["name"], "unit");
  EXPECT_EQ(r["run"]["status"], "finished");

  const auto& s = r["suite"];
  EXPECT_EQ(s["workloads"], 3);
  EXPECT_EQ(s["candidates"], 5);
  EXPECT_EQ(s["correct"], 3);
  EXPECT_DOUBLE_EQ(s["per_sample_correctness"].get<double>(), 3.0 / 5.0);
  EXPECT_EQ(s["solved"], 2);
  // geomean(max(2.5,1), max(0.8,1), 1.0 for 12p with no candidates)
  EXPECT_NEAR(s["geomean_speedup"].get<double>(), std::cbrt(2.5), 1e-12);
  EXPECT_EQ(s["timing"], "cpu-wall");

  const auto& ws = r["workloads"];
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[0]["id"], "8p");
  EXPECT_EQ(ws[0]["candidates"], 3);
  EXPECT_EQ(ws[0]["correct"], 2);
  EXPECT_DOUBLE_EQ(ws[0]["best_speedup"].get<double>(), 2.5);
  EXPECT_EQ(ws[0]["verdicts"],
            (nlohmann::json{{"correct", 2}, {"numerics_mismatch", 1}}));
  EXPECT_DOUBLE_EQ(ws[1]["best_speedup"].get<double>(), 0.8);
  EXPECT_EQ(ws[1]["verdicts"], (nlohmann::json{{"correct", 1}, {"no_code", 1}}));
  EXPECT_EQ(ws[2]["id"], "12p");
  EXPECT_EQ(ws[2]["candidates"], 0);
  EXPECT_DOUBLE_EQ(ws[2]["best_speedup"].get<double>(), 1.0);
  EXPECT_TRUE(ws[2]["verdicts"].is_object());
  EXPECT_TRUE(ws[2]["verdicts"].empty());

  // Exactly these keys, nothing else.
  EXPECT_EQ(r.size(), 4u);  // run, suite, workloads, llm
  EXPECT_EQ(r["run"].size(), 4u);  // id, name, status, models
  EXPECT_EQ(s["correct_cpu_branch_only"], 0);
  // the issue's seven + degenerate_workloads, correct_cpu_branch_only, correct_reduced_shapes_only
  EXPECT_EQ(s.size(), 14u);  // + pass_at_k, fast_p, study_definition, unsettled_rankings
  // pass@1 = mean of 1 - C(n-c,1)/C(n,1): 8p 2/3, 9p 1/2, 12p (no candidates) 0; no workload
  // has 5 candidates.
  EXPECT_DOUBLE_EQ(s["pass_at_k"]["1"].get<double>(), (2.0 / 3 + 0.5 + 0.0) / 3);
  EXPECT_TRUE(s["pass_at_k"]["5"].is_null());
  EXPECT_DOUBLE_EQ(s["fast_p"]["0"].get<double>(), 2.0 / 3);    // 8p, 9p solved
  EXPECT_DOUBLE_EQ(s["fast_p"]["1.0"].get<double>(), 1.0 / 3);  // 9p's 0.8x is not faster
  EXPECT_DOUBLE_EQ(s["fast_p"]["2.0"].get<double>(), 1.0 / 3);
  EXPECT_NE(report_text(*store_, run_, {"8p", "9p", "12p"}).find("pass@1 0.389"),
            std::string::npos);
  EXPECT_EQ(ws[0].size(), 8u);  // the issue's five + degenerate, insensitive_inputs, study_correct
}

TEST_F(RunReportTest, TheStudysDefinitionCountsRightNumbersWhateverTheStructureAndDtypeSaid) {
  auto numerics = [](bool ok) { return [ok](Evaluation& e) { e.numerics_ok = ok; }; };
  add("8p", 0, Verdict::correct, 1.5, "cpu-wall", Phase::iterate, "", numerics(true));
  add("8p", 1, Verdict::no_pallas, {}, "", Phase::iterate, "", numerics(true));  // XLA work
  add("8p", 2, Verdict::numerics_mismatch, {}, "", Phase::iterate, "", numerics(false));
  add("9p", 0, Verdict::numerics_mismatch, {}, "", Phase::iterate, "", numerics(true));  // dtype
  add("9p", 1, Verdict::no_pallas, {}, "", Phase::iterate, "", numerics(false));
  add("12p", 0, Verdict::lowering_error);  // never compared: numerics_ok absent
  const nlohmann::json r = report_json(*store_, run_, {"8p", "9p", "12p"});
  EXPECT_EQ(r["suite"]["correct"], 1);
  EXPECT_EQ(r["suite"]["solved"], 1);
  const auto& study = r["suite"]["study_definition"];
  EXPECT_EQ(study["correct"], 3);
  EXPECT_DOUBLE_EQ(study["per_sample_correctness"].get<double>(), 3.0 / 6.0);
  EXPECT_EQ(study["solved"], 2);  // 8p and 9p
  EXPECT_EQ(r["workloads"][0]["study_correct"], 2);
  EXPECT_EQ(r["workloads"][1]["study_correct"], 1);
  EXPECT_EQ(r["workloads"][2]["study_correct"], 0);
  const std::string text = report_text(*store_, run_, {"8p", "9p", "12p"});
  EXPECT_NE(text.find("study definition        per-sample correctness 50.0% (3/6), solved 2/3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("correct  study  speedup"), std::string::npos) << text;
}

TEST_F(RunReportTest, ABestKernelWhoseBandOverlapsTheRunnerUpsIsNotCalledFaster) {
  // Speedup bands: the baseline's median over the kernel's band.
  auto band = [](double low, double high) {
    return [low, high](Evaluation& e) {
      e.timing_runs = 5;
      e.kernel_ms_low = low;
      e.kernel_ms_high = high;
    };
  };
  // 8p: 2.0x [1.6, 2.5] against 1.8x [1.5, 2.0]: overlapping. 9p: 3.0x [2.5, 4.0] against 1.2x
  // [1.0, 1.5]: settled. 12p: one band only.
  add("8p", 0, Verdict::correct, 2.0, "cpu-wall", Phase::iterate, "", band(2.0 / 2.5, 2.0 / 1.6));
  add("8p", 1, Verdict::correct, 1.8, "cpu-wall", Phase::iterate, "", band(1.8 / 2.0, 1.8 / 1.5));
  add("9p", 0, Verdict::correct, 3.0, "cpu-wall", Phase::iterate, "", band(3.0 / 4.0, 3.0 / 2.5));
  add("9p", 1, Verdict::correct, 1.2, "cpu-wall", Phase::iterate, "", band(1.2 / 1.5, 1.2 / 1.0));
  add("12p", 0, Verdict::correct, 1.1, "cpu-wall", Phase::iterate, "", band(1.0, 1.2));
  const nlohmann::json r = report_json(*store_, run_, {"8p", "9p", "12p"});
  const auto& unsettled = r["suite"]["unsettled_rankings"];
  ASSERT_EQ(unsettled.size(), 1u) << unsettled;
  EXPECT_EQ(unsettled[0]["workload"], "8p");
  EXPECT_DOUBLE_EQ(unsettled[0]["best"].get<double>(), 2.0);
  EXPECT_NEAR(unsettled[0]["best_band"][0].get<double>(), 1.6, 1e-9);
  EXPECT_NEAR(unsettled[0]["runner_up_band"][1].get<double>(), 2.0, 1e-9);
  const std::string text = report_text(*store_, run_, {"8p", "9p", "12p"});
  EXPECT_NE(text.find("8p: the best 2.000x [1.600, 2.500] and the runner-up 1.800x [1.500, 2.000] "
                      "overlap"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("9p: the best"), std::string::npos);
}

// Issue 23: a workload's sitting (its best two kernels re-timed side by side with the baseline)
// decides which is published, at the sitting's own speedup, and its bands decide "unsettled".
TEST_F(RunReportTest, TheSittingDecidesTheBestAndWhetherItIsSettled) {
  add("8p", 0, Verdict::correct, 4.0);  // the evaluations' best
  add("8p", 1, Verdict::correct, 3.0);  // its runner-up
  add("9p", 0, Verdict::correct, 2.0);
  add("9p", 1, Verdict::correct, 1.5);
  add("12p", 0, Verdict::correct, 2.0);
  add("12p", 1, Verdict::correct, 1.9);
  std::map<std::string, std::vector<int64_t>> ids;  // workload -> candidate ids, by index
  for (const auto& c : store_->candidates(run_, RunStore::Texts::none))
    ids[c.workload].push_back(c.id);
  auto sitting = [&](const std::string& workload, double best_ms, double runner_ms,
                     const std::string& error = "") {
    SittingRecord s;
    s.run_id = run_;
    s.workload = workload;
    s.method = "iterative";
    for (int i = 0; i < 2; ++i) {
      const double ms = i == 0 ? best_ms : runner_ms;
      SittingKernel k;
      k.candidate_id = ids[workload][i];
      if (error.empty()) {
        k.kernel_ms = ms;
        k.kernel_ms_low = ms * 0.95;
        k.kernel_ms_high = ms * 1.05;
      }
      s.kernels.push_back(k);
    }
    if (error.empty()) s.baseline_ms = 6.0;
    s.timing_runs = 5;
    s.timing_kind = "cpu-wall";
    s.error = error;
    store_->put_sitting(s);
  };
  // 8p: the sitting reverses the order, 3.0 against 2.0 ms, bands apart: the runner-up is
  // published, at 6 / 2 = 3x. 9p: the order holds, 2.0 against 2.1 ms, the bands overlap.
  // 12p: the sitting was not held: the evaluations stand.
  sitting("8p", 3.0, 2.0);
  sitting("9p", 2.0, 2.1);
  sitting("12p", 0, 0, "candidate 1 is no longer correct here");
  const nlohmann::json r = report_json(*store_, run_, {"8p", "9p", "12p"});
  const auto& w = r["workloads"];
  ASSERT_EQ(w.size(), 3u);
  EXPECT_TRUE(w[0]["sitting"]["switched"].get<bool>()) << w[0];
  EXPECT_FALSE(w[0]["sitting"]["unsettled"].get<bool>());
  EXPECT_EQ(w[0]["sitting"]["published_candidate"], ids["8p"][1]);
  EXPECT_DOUBLE_EQ(w[0]["best_speedup"].get<double>(), 3.0);
  EXPECT_FALSE(w[1]["sitting"]["switched"].get<bool>());
  EXPECT_TRUE(w[1]["sitting"]["unsettled"].get<bool>());
  EXPECT_DOUBLE_EQ(w[1]["best_speedup"].get<double>(), 3.0);  // 6 / 2.0
  EXPECT_FALSE(w[2].contains("sitting"));
  EXPECT_DOUBLE_EQ(w[2]["best_speedup"].get<double>(), 2.0);
  // The suite follows the published bests: geomean of 3, 3 and 2.
  EXPECT_NEAR(r["suite"]["geomean_speedup"].get<double>(), std::cbrt(3.0 * 3.0 * 2.0), 1e-9);
  const auto& unsettled = r["suite"]["unsettled_rankings"];
  ASSERT_EQ(unsettled.size(), 1u) << unsettled;
  EXPECT_EQ(unsettled[0]["workload"], "9p");
  EXPECT_NEAR(unsettled[0]["best_band"][0].get<double>(), 6.0 / 2.1, 1e-9);
  const std::string text = report_text(*store_, run_, {"8p", "9p", "12p"});
  EXPECT_NE(text.find("8p: re-timed side by side (5 rounds, cpu-wall)"), std::string::npos) << text;
  EXPECT_NE(text.find("published: candidate " + std::to_string(ids["8p"][1]) +
                      " (the sitting reversed the evaluations' order)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the bands overlap: which is faster is not settled"), std::string::npos);
  EXPECT_EQ(text.find("12p: re-timed"), std::string::npos);
}

TEST_F(RunReportTest, PhasesShowWhatOptimisingAddedOverTheTranslatedSeeds) {
  add("8p", 0, Verdict::correct, 1.5, "cpu-wall", Phase::translate);
  add("8p", 1, Verdict::lowering_error, {}, "", Phase::translate);
  add("8p", 2, Verdict::correct, 2.0, "cpu-wall", Phase::optimise);
  add("8p", 3, Verdict::correct, 3.0, "cpu-wall", Phase::optimise);
  add("8p", 4, Verdict::numerics_mismatch, {}, "", Phase::optimise);
  add("9p", 0, Verdict::api_misuse, {}, "", Phase::translate);
  add("12p", 0, Verdict::correct, 1.1);  // an iterative candidate has no phase table

  const nlohmann::json r = report_json(*store_, run_, {"8p", "9p", "12p"});
  const auto& p8 = r["workloads"][0]["phases"];
  EXPECT_EQ(p8["translate"]["candidates"], 2);
  EXPECT_EQ(p8["translate"]["correct"], 1);
  EXPECT_DOUBLE_EQ(p8["translate"]["best_speedup"].get<double>(), 1.5);
  EXPECT_EQ(p8["optimise"]["candidates"], 3);
  EXPECT_EQ(p8["optimise"]["correct"], 2);
  EXPECT_DOUBLE_EQ(p8["optimise"]["best_speedup"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(p8["optimise"]["best_kernel_ms"].get<double>(), 1.0);
  const auto& p9 = r["workloads"][1]["phases"];
  EXPECT_TRUE(p9["translate"]["best_speedup"].is_null());
  EXPECT_FALSE(p9.contains("optimise"));
  EXPECT_FALSE(r["workloads"][2].contains("phases"));

  const std::string text = report_text(*store_, run_, {"8p", "9p", "12p"});
  EXPECT_NE(text.find("By phase"), std::string::npos) << text;
  EXPECT_NE(text.find("1/2 best 1.500x"), std::string::npos) << text;
  EXPECT_NE(text.find("2/3 best 3.000x"), std::string::npos) << text;
}

TEST_F(RunReportTest, EmptyWorkloadListUsesTheRunsWorkloads) {
  add("9p", 0, Verdict::timeout);
  add("8p", 0, Verdict::correct, 2.0);
  const nlohmann::json r = report_json(*store_, run_, {});
  ASSERT_EQ(r["workloads"].size(), 2u);
  EXPECT_EQ(r["workloads"][0]["id"], "9p");  // order of first appearance
  EXPECT_EQ(r["workloads"][1]["id"], "8p");
  EXPECT_NEAR(r["suite"]["geomean_speedup"].get<double>(), std::sqrt(2.0),
              1e-12);
}

TEST_F(RunReportTest, TimingIsTpuOnlyWhenAllTimingsAreTpu) {
  add("8p", 0, Verdict::correct, 2.0, "tpu-profiler");
  add("8p", 1, Verdict::compile_error, std::nullopt, "");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "tpu-profiler");
  EXPECT_EQ(report_text(*store_, run_, {}).find("NOT TPU"), std::string::npos);

  add("8p", 2, Verdict::correct, 3.0, "cpu-wall");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "cpu-wall");
}

TEST_F(RunReportTest, TpuWallFallbackIsNamedAndWarned) {
  add("8p", 0, Verdict::correct, 2.0, "tpu-profiler");
  add("8p", 1, Verdict::correct, 2.5, "tpu-wall-fallback");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "tpu-wall-fallback");
  EXPECT_NE(report_text(*store_, run_, {}).find("lower bounds"), std::string::npos);
  add("8p", 2, Verdict::correct, 3.0, "cpu-wall");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "cpu-wall");
}

TEST_F(RunReportTest, UntimedFailuresDoNotDecideTheTimingKind) {
  // Agents stamp failed candidates with a timing kind too; an untimed
  // failure must not make a TPU run's report say "NOT TPU speedups".
  add("8p", 0, Verdict::correct, 2.0, "tpu-profiler");
  add("8p", 1, Verdict::numerics_mismatch, std::nullopt, "cpu-wall");
  add("9p", 0, Verdict::compile_error, std::nullopt, "cpu-wall");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "tpu-profiler");
  EXPECT_EQ(report_text(*store_, run_, {}).find("NOT TPU"), std::string::npos);
}

TEST_F(RunReportTest, NoTimingAtAllIsNotCalledTpu) {
  add("8p", 0, Verdict::no_code, std::nullopt, "");
  add("8p", 1, Verdict::compile_error, std::nullopt, "tpu-profiler");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["timing"], "cpu-wall");
}

TEST_F(RunReportTest, CorrectVerdictsRestingOnTheCpuBranchAloneAreCounted) {
  add("8p", 0, Verdict::correct, 2.0, "cpu-wall", Phase::iterate, "mosaic_interpreter");
  add("8p", 1, Verdict::numerics_mismatch, std::nullopt, "", Phase::iterate, "cpu_branch_only");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["correct_cpu_branch_only"], 0);
  EXPECT_EQ(report_text(*store_, run_, {}).find("CPU branch alone"), std::string::npos);
  add("9p", 0, Verdict::correct, 1.5, "cpu-wall", Phase::iterate, "cpu_branch_only");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["correct_cpu_branch_only"], 1);
  EXPECT_NE(report_text(*store_, run_, {}).find("1 were checked by their CPU branch alone"),
            std::string::npos);
}

TEST_F(RunReportTest, CorrectVerdictsRunAtTheReducedShapesOnlyAreCounted) {
  add("8p", 0, Verdict::correct, 2.0, "cpu-wall", Phase::iterate, "full_shapes");
  add("8p", 1, Verdict::correct, 2.0, "tpu-profiler", Phase::iterate, "tpu");
  add("8p", 2, Verdict::numerics_mismatch, std::nullopt, "", Phase::iterate, "mosaic_interpreter");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["correct_reduced_shapes_only"], 0);
  EXPECT_EQ(report_text(*store_, run_, {}).find("reduced shapes only"), std::string::npos);
  add("9p", 0, Verdict::correct, 1.5, "cpu-wall", Phase::iterate, "mosaic_interpreter");
  add("9p", 1, Verdict::correct, 1.5, "cpu-wall", Phase::iterate, "cpu_branch_only");
  EXPECT_EQ(report_json(*store_, run_, {})["suite"]["correct_reduced_shapes_only"], 2);
  EXPECT_NE(report_text(*store_, run_, {}).find("2 were run at the reduced shapes only"),
            std::string::npos);
}

TEST_F(RunReportTest, UnevaluatedCandidatesAreLeftOut) {
  add("8p", 0, Verdict::correct, 2.0);
  add("8p", 1, std::nullopt);
  const nlohmann::json r = report_json(*store_, run_, {"8p"});
  EXPECT_EQ(r["suite"]["candidates"], 1);
  EXPECT_NE(report_text(*store_, run_, {"8p"}).find("not yet evaluated"),
            std::string::npos);
}

TEST_F(RunReportTest, TextStatesDefinitionsAndCpuWarning) {
  add("8p", 0, Verdict::correct, 1.5);
  add("8p", 1, Verdict::numerics_mismatch);
  const std::string t = report_text(*store_, run_, {"8p", "9p"});
  EXPECT_NE(t.find("Run " + std::to_string(run_) + " \"unit\" (running)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("8p"), std::string::npos);
  EXPECT_NE(t.find("1.500x"), std::string::npos);
  EXPECT_NE(t.find("correct=1 numerics_mismatch=1"), std::string::npos) << t;
  EXPECT_NE(t.find("per-sample correctness  50.0% (1/2)"), std::string::npos)
      << t;
  EXPECT_NE(t.find("solved                  1/2"), std::string::npos) << t;
  EXPECT_NE(t.find("max(speedup(w), 1.0)"), std::string::npos);
  EXPECT_NE(t.find("CPU interpret-mode wall-clock ratios, NOT TPU speedups"),
            std::string::npos);
}

TEST_F(RunReportTest, DegenerateWorkloadsAreFlaggedNotDropped) {
  add("26k", 0, Verdict::correct, 40.0);
  add("8p", 0, Verdict::correct, 1.5);
  InputSensitivity flags{{"26k", {"x", "bmm_weight"}}, {"8p", {}}};
  const nlohmann::json r = report_json(*store_, run_, {"8p", "26k"}, flags);
  EXPECT_EQ(r["suite"]["degenerate_workloads"], nlohmann::json::array({"26k"}));
  EXPECT_EQ(r["workloads"][1]["degenerate"], true);
  EXPECT_EQ(r["workloads"][1]["insensitive_inputs"], nlohmann::json::array({"x", "bmm_weight"}));
  EXPECT_EQ(r["workloads"][0]["degenerate"], false);
  // The metric itself is unchanged: the flag warns, it does not rewrite results.
  EXPECT_NEAR(r["suite"]["geomean_speedup"].get<double>(), std::sqrt(1.5 * 40.0), 1e-9);
  const std::string t = report_text(*store_, run_, {"8p", "26k"}, flags);
  EXPECT_NE(t.find("26k*"), std::string::npos) << t;
  EXPECT_NE(t.find("26k is degenerate: its reference ignores x, bmm_weight"), std::string::npos)
      << t;
}

TEST_F(RunReportTest, NamesTheModelsAndSaysTheSyntheticOneIsNoLlm) {
  add("8p", 0, Verdict::correct, 1.5);
  for (const char* model : {"synthetic", "synthetic", "replay"}) {
    LlmCallRecord call;
    call.run_id = run_;
    call.provider = model;
    call.model = model;
    call.tokens_estimated = true;
    store_->put_llm_call(call);
  }
  const nlohmann::json r = report_json(*store_, run_, {"8p"});
  EXPECT_EQ(r["run"]["models"], (std::vector<std::string>{"synthetic", "replay"}));
  const std::string text = report_text(*store_, run_, {"8p"});
  EXPECT_NE(text.find("\nmodel: synthetic (the offline synthetic model of llm/synthetic/, not an LLM"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nmodel: replay (recorded responses"), std::string::npos);
}

TEST_F(RunReportTest, ARunServedFromTheCacheKeepsItsModelLabel) {
  // Another run paid for the answer; this run's candidate reused it and made no call.
  const int64_t other = store_->begin_or_resume_run("other", "workloads: [8p]");
  LlmCallRecord call;
  call.run_id = other;
  call.provider = "synthetic";
  call.model = "synthetic";
  call.tokens_estimated = true;
  LlmResponseRecord response;
  response.provider = "synthetic";
  response.model = "synthetic";
  response.call_id = store_->put_llm_call(call);
  response.prompt_system = "system";
  response.prompt_user = "user";
  response.text = "code";
  const int64_t response_id = store_->put_response(response).id;
  SampleRecord c;
  c.run_id = run_;
  c.workload = "8p";
  c.method = "iterative";
  c.code = "code";
  c.response_id = response_id;
  store_->put_sample(c);
  ASSERT_TRUE(store_->llm_calls(run_).empty());
  const nlohmann::json r = report_json(*store_, run_, {"8p"});
  EXPECT_EQ(r["run"]["models"], (std::vector<std::string>{"synthetic"}));
}

TEST(InputSensitivityTable, LoadsTheStoredAuditAndRejectsContradictions) {
  auto dir = std::filesystem::temp_directory_path() / ("sens-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ok.json")
      << R"({"workloads": {"25k": {"degenerate": true, "insensitive_inputs": ["x"]},
                           "8p": {"degenerate": false, "insensitive_inputs": []}}})";
  auto table = load_input_sensitivity(dir / "ok.json");
  EXPECT_EQ(table.at("25k"), std::vector<std::string>{"x"});
  EXPECT_TRUE(table.at("8p").empty());
  EXPECT_TRUE(load_input_sensitivity(dir / "missing.json").empty());
  std::ofstream(dir / "bad.json")
      << R"({"workloads": {"25k": {"degenerate": false, "insensitive_inputs": ["x"]}}})";
  EXPECT_THROW(load_input_sensitivity(dir / "bad.json"), StoreError);
  std::ofstream(dir / "garbage.json") << "not json";
  EXPECT_THROW(load_input_sensitivity(dir / "garbage.json"), StoreError);
  // The repository's own table parses and flags the study's known case.
  auto repo = load_input_sensitivity(std::string(PALLADIUM_SOURCE_DIR) +
                                     "/workloads/input_sensitivity.json");
  EXPECT_FALSE(repo.at("26k").empty());
  std::filesystem::remove_all(dir);
}

TEST_F(RunReportTest, UnknownRunThrows) {
  EXPECT_THROW(report_json(*store_, run_ + 100, {}), StoreError);
  EXPECT_THROW(report_text(*store_, run_ + 100, {}), StoreError);
}

}  // namespace
}  // namespace palladium
