#include "report/sweep_report.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace palladium {
namespace {

ReportCandidate cand(int64_t id, const std::string& w, int64_t seed, int index,
                     std::optional<Verdict> v, std::optional<double> speedup = {},
                     const std::string& timing = "cpu-wall") {
  ReportCandidate c;
  c.id = id;
  c.workload = w;
  c.seed = seed;
  c.sample_index = index;
  c.verdict = v;
  c.speedup = speedup;
  if (speedup) {
    c.kernel_ms = 1.0;
    c.baseline_ms = *speedup;
  }
  c.timing_kind = timing;
  return c;
}

ReportCell cell(const std::string& method, int64_t seed, std::vector<ReportCandidate> cands) {
  ReportCell c;
  c.key = "method=" + method + ",seed=" + std::to_string(seed);
  c.params = {{"method", method}, {"seed", std::to_string(seed)}};
  c.method = method;
  c.model = "synthetic";
  c.status = "finished";
  c.run_id = seed + 1;
  c.suite = {"8p", "12p"};
  c.candidates = std::move(cands);
  return c;
}

SweepReportInput two_methods_two_seeds() {
  SweepReportInput in;
  in.title = "t";
  const auto ok = Verdict::correct, bad = Verdict::numerics_mismatch;
  in.cells.push_back(cell("a", 0, {cand(1, "8p", 0, 0, bad), cand(2, "8p", 0, 1, ok, 2.0),
                                   cand(3, "12p", 0, 0, bad), cand(4, "12p", 0, 1, bad)}));
  in.cells.push_back(cell("a", 1, {cand(5, "8p", 1, 0, ok, 4.0), cand(6, "8p", 1, 1, bad),
                                   cand(7, "12p", 1, 0, ok, 0.5), cand(8, "12p", 1, 1, std::nullopt)}));
  in.cells.push_back(cell("b", 0, {cand(9, "8p", 0, 0, Verdict::lowering_error),
                                   cand(10, "12p", 0, 0, Verdict::no_code)}));
  ReportUsage& u = in.cells[2].usage;
  u.calls = 3;
  u.prompt_tokens = 300;
  u.completion_tokens = 120;
  u.thinking_tokens = 10;
  u.cost_usd = 0.25;
  u.cost_complete = false;
  in.hand_tuned["8p"] = cand(100, "8p", 0, 0, ok, 3.0);
  in.sensitivity["12p"] = {"scale"};
  return in;
}

TEST(SweepReport, SeedCellsAreOneConditionMeasuredPerSeed) {
  auto r = sweep_report_json(two_methods_two_seeds());
  ASSERT_EQ(r["groups"].size(), 1u);
  const auto& g = r["groups"][0];
  EXPECT_EQ(g["timing"], "cpu-wall");
  ASSERT_EQ(g["conditions"].size(), 2u);
  const auto& a = g["conditions"][0];
  EXPECT_EQ(a["key"], "method=a");
  EXPECT_EQ(a["seeds"].size(), 2u);
  EXPECT_EQ(a["cells"].size(), 2u);
  const auto& t = a["table2"];
  // Seed 0: solved 1, geomean sqrt(2), 1/4 correct. Seed 1 (one candidate not yet
  // evaluated, left out): solved 2, geomean sqrt(4 x max(0.5, 1)) = 2, 2/3 correct.
  EXPECT_EQ(t["candidates"], 7);
  EXPECT_EQ(t["correct"], 3);
  EXPECT_DOUBLE_EQ(t["pooled_per_sample_correctness"].get<double>(), 3.0 / 7);
  EXPECT_DOUBLE_EQ(t["solved"]["mean"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(t["solved"]["low"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(t["solved"]["high"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(t["geomean_speedup"]["mean"].get<double>(), (std::sqrt(2.0) + 2.0) / 2);
  EXPECT_DOUBLE_EQ(t["per_sample_correctness"]["mean"].get<double>(), (0.25 + 2.0 / 3) / 2);
  EXPECT_EQ(a["outcomes"]["correct"], 3);
  EXPECT_EQ(a["outcomes"]["numerics_mismatch"], 4);
}

TEST(SweepReport, BudgetCurvesArePrefixesEndingAtTheTable) {
  auto r = sweep_report_json(two_methods_two_seeds());
  const auto& a = r["groups"][0]["conditions"][0];
  ASSERT_EQ(a["curve"].size(), 2u);
  const auto& k1 = a["curve"][0];
  EXPECT_EQ(k1["samples_per_workload"], 1);
  EXPECT_DOUBLE_EQ(k1["solved"]["mean"].get<double>(), 1.0);          // 0 and 2
  EXPECT_DOUBLE_EQ(k1["geomean_speedup"]["mean"].get<double>(), 1.5);  // 1 and 2
  EXPECT_EQ(a["curve"][1]["solved"], a["table2"]["solved"]);
  EXPECT_EQ(a["curve"][1]["geomean_speedup"], a["table2"]["geomean_speedup"]);
}

TEST(SweepReport, Table3ComparesWithTheHandTunedSpeedupOnTheSameWorkloads) {
  auto r = sweep_report_json(two_methods_two_seeds());
  const auto& t3 = r["groups"][0]["table3"];
  EXPECT_EQ(t3["workloads"].size(), 1u);
  EXPECT_EQ(t3["workloads"][0], "8p");
  EXPECT_DOUBLE_EQ(t3["hand_tuned_suite"].get<double>(), 3.0);
  ASSERT_EQ(t3["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(t3["rows"][0]["speedups"]["8p"].get<double>(), 3.0);  // mean of 2 and 4
  EXPECT_DOUBLE_EQ(t3["rows"][0]["percent_of_hand_tuned"].get<double>(), 100.0);
  EXPECT_NEAR(t3["rows"][1]["percent_of_hand_tuned"].get<double>(), 100.0 / 3, 1e-9);
}

TEST(SweepReport, AHandTunedReferenceTimedAnotherWayCountsAsOneAndIsNamed) {
  auto in = two_methods_two_seeds();
  in.hand_tuned["8p"].timing_kind = "tpu-profiler";
  auto t3 = sweep_report_json(in)["groups"][0]["table3"];
  EXPECT_DOUBLE_EQ(t3["hand_tuned"]["8p"].get<double>(), 1.0);
  EXPECT_NE(t3["note"].get<std::string>().find("8p: correct (timed tpu-profiler, not comparable)"),
            std::string::npos)
      << t3["note"];
}

TEST(SweepReport, TimingKindsAreNeverMixed) {
  auto in = two_methods_two_seeds();
  for (auto& c : in.cells[2].candidates) c.timing_kind = "tpu-profiler";
  in.cells[2].candidates.push_back(cand(11, "8p", 0, 1, Verdict::correct, 9.0, "tpu-profiler"));
  auto r = sweep_report_json(in);
  ASSERT_EQ(r["groups"].size(), 2u);
  EXPECT_EQ(r["groups"][0]["timing"], "tpu-profiler");
  EXPECT_EQ(r["groups"][0]["conditions"].size(), 1u);
  EXPECT_EQ(r["groups"][1]["timing"], "cpu-wall");
  EXPECT_EQ(r["groups"][0]["suffix"], "_tpu-profiler");
  // The 9x TPU kernel is best only among TPU timings; the CPU best stays apart.
  const auto& best8 = r["workloads"][0]["best"];
  ASSERT_EQ(best8.size(), 2u);
  EXPECT_EQ(best8[0]["candidate_id"], 11);
  EXPECT_EQ(best8[1]["candidate_id"], 5);
  EXPECT_EQ(best8[1]["file"], "kernels/8p.cpu-wall.py");
}

TEST(SweepReport, CellsCarryStatusUsageAndPending) {
  auto r = sweep_report_json(two_methods_two_seeds());
  ASSERT_EQ(r["cells"].size(), 3u);
  EXPECT_EQ(r["cells"][1]["pending"], 1);
  EXPECT_EQ(r["cells"][2]["llm"]["prompt_tokens"], 300);
  EXPECT_EQ(r["cells"][2]["llm"]["cost_complete"], false);
  EXPECT_EQ(r["workloads"][1]["degenerate"], true);
  EXPECT_EQ(r["workloads"][0]["best"][0]["cell"], "method=a,seed=1");
}

TEST(SweepReport, MarkdownAndCsvSayWhatTheNumbersAre) {
  auto r = sweep_report_json(two_methods_two_seeds());
  auto md = sweep_report_markdown(r);
  EXPECT_NE(md.find("NOT TPU speedups"), std::string::npos);
  EXPECT_NE(md.find("model: synthetic"), std::string::npos);
  // Intervals are columns of their own.
  EXPECT_NE(md.find("| method=a | synthetic | 2 | 7 | 45.8% | [25.0%, 66.7%] | 1.50 / 2 | "
                    "[1.00, 2.00] |"),
            std::string::npos)
      << md;
  // One seed: no interval, and the warning says why.
  EXPECT_NE(md.find("| method=b | synthetic | 1 | 2 | 0.0% | - | 0.00 / 2 | - |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("**Warning:** intervals here rest on 1 seed(s)"), std::string::npos);
  EXPECT_NE(md.find("Reading: method=b is behind method=a on speed by"), std::string::npos) << md;
  EXPECT_NE(md.find(">= $0.2500 (some calls unpriced)"), std::string::npos);
  EXPECT_NE(md.find("12p ignores scale"), std::string::npos);
  EXPECT_EQ(md.find("DESIGN.md"), std::string::npos);
  auto csv = sweep_report_csv(r);
  ASSERT_EQ(csv.count("table2.csv"), 1u);
  const auto& t2 = csv["table2.csv"];
  EXPECT_EQ(std::count(t2.begin(), t2.end(), '\n'), 3) << t2;  // header + 2 conditions
  EXPECT_NE(t2.find("cpu-wall,synthetic,method=a,2,7,3,2,"), std::string::npos) << t2;
  EXPECT_NE(csv["budget_curves.csv"].find("cpu-wall,synthetic,method=a,1,1,"), std::string::npos);
}

TEST(SweepReport, NoComparableHandTunedTimeShowsNoPercentage) {
  auto in = two_methods_two_seeds();
  in.hand_tuned["8p"].verdict = Verdict::compile_error;
  in.hand_tuned["8p"].speedup.reset();
  auto r = sweep_report_json(in);
  const auto& t3 = r["groups"][0]["table3"];
  EXPECT_FALSE(t3["hand_tuned_ran"].get<bool>());
  EXPECT_TRUE(t3["rows"][0]["percent_of_hand_tuned"].is_null());
  auto md = sweep_report_markdown(r);
  EXPECT_EQ(md.find("| 100% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| hand-tuned reference | no hand-tuned run | - | no hand-tuned run |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 3.000 | no hand-tuned run |"), std::string::npos) << md;
  // With a comparable reference the row is stated as before.
  EXPECT_NE(sweep_report_markdown(sweep_report_json(two_methods_two_seeds())).find("| 100% |"),
            std::string::npos);
}

TEST(SweepReport, ConditionsCarryPassAtKFastPAndAComparison) {
  auto r = sweep_report_json(two_methods_two_seeds());
  const auto& g = r["groups"][0];
  const auto& a = g["conditions"][0];
  // Runs of a: seed 0 {8p: 1 of 2 correct, 2.0x; 12p: 0 of 2}, seed 1 {8p: 1 of 2, 4.0x;
  // 12p: 1 of 1, 0.5x}. Seed 1's 12p run has one candidate, so pass@k exists for k = 1 only.
  ASSERT_EQ(a["pass_at_k"].size(), 1u);
  EXPECT_EQ(a["pass_at_k"][0]["k"], 1);
  EXPECT_DOUBLE_EQ(a["pass_at_k"][0]["estimate"]["value"].get<double>(),
                   ((0.5 + 0.5) / 2 + (0.0 + 1.0) / 2) / 2);
  ASSERT_EQ(a["fast_p"].size(), 5u);
  EXPECT_DOUBLE_EQ(a["fast_p"][0]["estimate"]["value"].get<double>(), (1.0 + 0.5) / 2);  // p=0
  EXPECT_DOUBLE_EQ(a["fast_p"][1]["estimate"]["value"].get<double>(), (1.0 + 0.0) / 2);  // p=1
  EXPECT_DOUBLE_EQ(a["table2"]["iqm_speedup"]["value"].get<double>(), 1.5);  // 1, 1, 2, 4
  ASSERT_EQ(g["comparisons"].size(), 1u);
  const auto& c = g["comparisons"][0];
  EXPECT_EQ(c["a"], "method=b");
  EXPECT_EQ(c["b"], "method=a");
  EXPECT_EQ(c["axis"], "method");
  EXPECT_FALSE(c["paired"].get<bool>());  // b ran seed 0 only
  EXPECT_TRUE(c["few_seeds"].get<bool>());
  EXPECT_NE(c["warning"].get<std::string>().find("fewer than 5"), std::string::npos);
  // b solved nothing; a's geomean over workloads and seeds is exp((ln2 + ln4) / 2 / 2).
  EXPECT_NEAR(c["geomean_speedup"]["diff"].get<double>(), 1.0 - std::pow(2.0, 0.75), 1e-12);
  auto csv = sweep_report_csv(r);
  EXPECT_NE(csv["comparisons.csv"].find("cpu-wall,method=b,method=a,method,2,1,2,0,geomean_speedup,"),
            std::string::npos)
      << csv["comparisons.csv"];
  EXPECT_NE(csv["fast_p.csv"].find("cpu-wall,synthetic,method=a,1.2,"), std::string::npos)
      << csv["fast_p.csv"];
}

// Issue 21 item 6: the report names each quarantined key, why, and how many results it sent.
TEST(SweepReport, ListsQuarantinedKeys) {
  auto in = two_methods_two_seeds();
  EXPECT_TRUE(sweep_report_json(in)["quarantined_keys"].empty());
  EXPECT_EQ(sweep_report_markdown(sweep_report_json(in)).find("Quarantined"), std::string::npos);
  in.quarantines.push_back(ReportQuarantine{
      3, "rq2Mx=KEYKEYKEYKEYKEYKEYKEYKEYKEYKEYKEY01", "forger",
      "claimed correct for job 12 where agent h found numerics_mismatch", 12, 7});
  auto r = sweep_report_json(in);
  ASSERT_EQ(r["quarantined_keys"].size(), 1u);
  EXPECT_EQ(r["quarantined_keys"][0]["evaluations"], 7);
  auto md = sweep_report_markdown(r);
  EXPECT_NE(md.find("## Quarantined agent keys"), std::string::npos);
  EXPECT_NE(md.find("| 3 | forger | `rq2Mx=KEYKEYKEYKEYKEYKEYKEYKEYKEYKEYKEY01` | 12 | claimed "
                    "correct for job 12 where agent h found numerics_mismatch | 7 |"),
            std::string::npos)
      << md;
}

TEST(SweepReport, SuspectTimingsAreListedAndBandsComparedWithTheRunnerUp) {
  auto in = two_methods_two_seeds();
  // The judge re-timed candidate 5 (8p, 4.0x) on another slot and the speed held.
  auto& held = in.cells[1].candidates[0];
  ASSERT_EQ(held.id, 5);
  held.plausibility = "implausible_speed";
  held.retiming_json = R"({"first":{"kernel_ms":1.0},"second":{"kernel_ms":1.05}})";
  held.timing_runs = 5;
  held.kernel_ms_low = 0.9;
  held.kernel_ms_high = 1.2;
  // Its runner-up, candidate 2 (2.0x, 1 ms by the fixture), with a band that overlaps.
  auto& next = in.cells[0].candidates[1];
  ASSERT_EQ(next.id, 2);
  next.kernel_ms_low = 1.1;
  next.kernel_ms_high = 1.4;
  // A TPU time far below the v6e roofline, which no judge flagged: the report's own check.
  in.cells[2].candidates.push_back(cand(11, "8p", 0, 1, Verdict::correct, 3.0, "tpu-profiler"));
  in.costs["8p"] = {918e9, 0.82e9};  // a 1 ms floor; the fixture's kernel time is 1 ms
  in.cells[2].candidates.back().kernel_ms = 0.25;
  auto r = sweep_report_json(in);
  const auto& sus = r["suspect_timings"];
  ASSERT_EQ(sus.size(), 2u) << sus.dump();
  EXPECT_EQ(sus[0]["candidate_id"], 11);
  EXPECT_NE(sus[0]["reason"].get<std::string>().find("4.00x the v6e compute roofline"),
            std::string::npos)
      << sus[0]["reason"];
  EXPECT_EQ(sus[1]["candidate_id"], 5);
  EXPECT_EQ(sus[1]["plausibility"], "implausible_speed");
  EXPECT_EQ(sus[1]["retiming"]["second"]["kernel_ms"], 1.05);
  const auto& cpu_best = r["workloads"][0]["best"][1];
  ASSERT_EQ(cpu_best["candidate_id"], 5);
  EXPECT_EQ(cpu_best["kernel_ms_band"], nlohmann::ordered_json::array({0.9, 1.2}));
  EXPECT_EQ(cpu_best["runner_up"]["candidate_id"], 2);
  EXPECT_TRUE(cpu_best["runner_up"]["bands_overlap"].get<bool>());
  auto md = sweep_report_markdown(r);
  EXPECT_NE(md.find("## Timings to look at"), std::string::npos);
  EXPECT_NE(md.find("| 5 | 8p | method=a,seed=1 | cpu-wall | 4.000x | implausible_speed | flagged "
                    "by the judge | first 1 ms, second 1.05 ms |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("1 ms [0.9, 1.2], 5 runs; overlaps the runner-up (2.000x); "
                    "**implausible_speed**"),
            std::string::npos)
      << md;
  // Ten times faster than the baseline on a CPU: the ceiling applies to every backend.
  auto plain = two_methods_two_seeds();
  plain.cells[1].candidates[0].speedup = 12.0;
  EXPECT_EQ(sweep_report_json(plain)["suspect_timings"].size(), 1u);
  EXPECT_TRUE(sweep_report_json(two_methods_two_seeds())["suspect_timings"].empty());
}

TEST(SweepReport, EmptyInputGivesAnEmptyReport) {
  auto r = sweep_report_json(SweepReportInput{});
  EXPECT_TRUE(r["groups"].empty());
  EXPECT_FALSE(sweep_report_markdown(r).empty());
}

}  // namespace
}  // namespace palladium
