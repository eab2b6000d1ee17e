#include "report/sweep_report_sittings.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace palladium {
namespace {

ReportCandidate cand(int64_t id, const std::string& w, Verdict v, std::optional<double> speedup) {
  ReportCandidate c;
  c.id = id;
  c.workload = w;
  c.sample_index = static_cast<int>(id);
  c.verdict = v;
  c.speedup = speedup;
  if (speedup) {
    c.kernel_ms = 1.0;
    c.baseline_ms = *speedup;
  }
  c.timing_kind = "cpu-wall";
  return c;
}

SittingRecord sitting(const std::string& w, int64_t best, double best_ms, double best_low,
                      double best_high, int64_t second, double second_ms, double second_low,
                      double second_high, double baseline_ms) {
  SittingRecord s;
  s.workload = w;
  s.kernels = {{best, best_ms, best_low, best_high}, {second, second_ms, second_low, second_high}};
  s.baseline_ms = baseline_ms;
  s.timing_runs = 5;
  s.timing_kind = "cpu-wall";
  return s;
}

ReportCell cell(const std::string& method, std::vector<ReportCandidate> cands) {
  ReportCell c;
  c.key = "method=" + method;
  c.params = {{"method", method}};
  c.method = method;
  c.model = "synthetic";
  c.status = "finished";
  c.run_id = 1;
  c.suite = {"8p", "12p", "41k"};
  c.candidates = std::move(cands);
  return c;
}

// Method a: 8p's sitting switches its best (candidate 2 at 3.0 / 2.0 = 1.5x, clear of candidate
// 1 at 3.0 / 2.4 = 1.25x; candidate 3's evaluated 1.7x is read at most at 1.5x); 12p's keeps
// candidate 4 at 6.0 / 2.0 = 3.0x but the bands overlap (2.2 >= 2.1); a later sitting of 12p
// that failed is ignored; 41k is unsolved (1.0x). Method b: two kernels at 1.0x, no sitting.
SweepReportInput sweep() {
  const auto ok = Verdict::correct;
  SweepReportInput in;
  in.title = "t";
  in.cells.push_back(cell("a", {cand(1, "8p", ok, 2.0), cand(2, "8p", ok, 1.5),
                                cand(3, "8p", ok, 1.7), cand(4, "12p", ok, 3.0),
                                cand(5, "12p", ok, 2.5),
                                cand(6, "41k", Verdict::numerics_mismatch, std::nullopt)}));
  auto& a = in.cells.back();
  a.sittings.push_back(sitting("8p", 1, 2.4, 2.3, 2.5, 2, 2.0, 1.9, 2.1, 3.0));
  a.sittings.push_back(sitting("12p", 4, 2.0, 1.8, 2.2, 5, 2.2, 2.1, 2.4, 6.0));
  SittingRecord failed = sitting("12p", 4, 9.0, 9.0, 9.0, 5, 1.0, 1.0, 1.0, 6.0);
  failed.error = "judge timed out";
  a.sittings.push_back(failed);
  in.cells.push_back(cell("b", {cand(7, "8p", ok, 1.0), cand(8, "12p", ok, 1.0)}));
  in.cells.back().run_id = 2;
  return in;
}

const nlohmann::ordered_json& fast(const nlohmann::ordered_json& cond, double p) {
  for (const auto& f : cond["fast_p"])
    if (f["p"].get<double>() == p) return f["estimate"];
  throw std::runtime_error("no fast_p for that p");
}

TEST(SweepReportSittings, TheSittingSetsTheCellsBestsGeomeanAndFastP) {
  const auto r = sweep_report_json(sweep());
  const double geomean = std::cbrt(1.5 * 3.0 * 1.0);  // by the evaluations: cbrt(2 x 3)
  const auto& cond = r["groups"][0]["conditions"][0];
  ASSERT_EQ(cond["key"], "method=a");
  EXPECT_NEAR(cond["table2"]["geomean_speedup"]["mean"].get<double>(), geomean, 1e-12);
  EXPECT_NEAR(cond["curve"].back()["geomean_speedup"]["mean"].get<double>(), geomean, 1e-12);
  // 8p at 1.5x is not above 1.5 (by the evaluations it was, at 2.0x); 12p at 3.0x is.
  EXPECT_NEAR(fast(cond, 1.2)["value"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_NEAR(fast(cond, 1.5)["value"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(fast(cond, 2.0)["value"].get<double>(), 1.0 / 3, 1e-12);

  const auto& c = r["cells"][0];
  EXPECT_NEAR(c["geomean_speedup"].get<double>(), geomean, 1e-12);
  EXPECT_EQ(c["sittings"]["published"], 2);
  EXPECT_EQ(c["sittings"]["unsettled"], 1);
  EXPECT_EQ(r["cells"][1]["sittings"]["published"], 0);
  EXPECT_DOUBLE_EQ(c["per_workload"][0]["best_speedup"].get<double>(), 1.5);

  // Paired comparison b against a: the difference of the geomeans uses a's sitting bests.
  const auto& cmp = r["groups"][0]["comparisons"][0]["geomean_speedup"];
  EXPECT_NEAR(std::abs(cmp["diff"].get<double>()), geomean - 1.0, 1e-9);
}

TEST(SweepReportSittings, TheBestKernelIsTheSittingsFasterRankedAgainstItsPartner) {
  const auto r = sweep_report_json(sweep());
  const auto& p8 = r["workloads"][0]["best"][0];
  ASSERT_EQ(r["workloads"][0]["id"], "8p");
  EXPECT_EQ(p8["candidate_id"], 2);
  EXPECT_DOUBLE_EQ(p8["speedup"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(p8["kernel_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(p8["baseline_ms"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(p8["sitting"]["evaluated_speedup"].get<double>(), 1.5);
  EXPECT_FALSE(p8["sitting"]["unsettled"].get<bool>());
  EXPECT_EQ(p8["runner_up"]["candidate_id"], 1);
  EXPECT_DOUBLE_EQ(p8["runner_up"]["speedup"].get<double>(), 1.25);
  EXPECT_FALSE(p8["runner_up"]["bands_overlap"].get<bool>());

  const auto& p12 = r["workloads"][1]["best"][0];
  EXPECT_EQ(p12["candidate_id"], 4);
  EXPECT_TRUE(p12["sitting"]["unsettled"].get<bool>());
  EXPECT_TRUE(p12["runner_up"]["bands_overlap"].get<bool>());
  EXPECT_TRUE(r["workloads"][2]["best"].empty());

  const std::string md = sweep_report_markdown(r);
  EXPECT_NE(md.find("re-timed bests (unsettled)"), std::string::npos);
  EXPECT_NE(md.find("| 2 (1) |"), std::string::npos);
  EXPECT_NE(md.find("re-timed side by side (3.000x by its evaluation), not settled"), std::string::npos);
}

TEST(SweepReportSittings, ASittingWithoutTheEvaluationsBestOrOfAnotherSeedChangesNothing) {
  SweepReportInput in = sweep();
  auto& a = in.cells[0];
  a.sittings = {sitting("8p", 2, 1.0, 1.0, 1.0, 3, 1.0, 1.0, 1.0, 9.0)};  // best is 1
  SittingRecord other_seed = sitting("12p", 4, 1.0, 1.0, 1.0, 5, 1.0, 1.0, 1.0, 9.0);
  other_seed.seed = 7;
  a.sittings.push_back(other_seed);
  const auto out = with_published_bests(in);
  EXPECT_EQ(out.cells[0].sitting_bests, 0);
  for (size_t i = 0; i < in.cells[0].candidates.size(); ++i)
    EXPECT_EQ(out.cells[0].candidates[i].speedup, in.cells[0].candidates[i].speedup);
}

TEST(SweepReportSittings, ApplyingTwiceIsApplyingOnce) {
  const auto once = with_published_bests(sweep());
  const auto twice = with_published_bests(once);
  EXPECT_EQ(twice.cells[0].sitting_bests, 2);
  for (size_t i = 0; i < once.cells[0].candidates.size(); ++i)
    EXPECT_EQ(twice.cells[0].candidates[i].speedup, once.cells[0].candidates[i].speedup);
  EXPECT_NEAR(*once.cells[0].candidates[2].speedup, 1.5, 1e-12);  // 1.7x read at 1.5x
  EXPECT_DOUBLE_EQ(*once.cells[0].candidates[2].evaluated_speedup, 1.7);
}

}  // namespace
}  // namespace palladium
