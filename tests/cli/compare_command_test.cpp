// A database built by hand with known outcomes: the paired comparison and the
// sweep report's pass@k, fast_p and roofline figures, each checked against a
// computation written out here again, independently of search/ (its own
// SplitMix64, quantile, IQM and probability of improvement).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "report/report_input.hpp"
#include "store/run_store.hpp"
#include "report/sweep_report.hpp"
#include "report/sweep_report_compare.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

const std::vector<std::string> kSuite = {"1p", "8p", "12p"};
const std::vector<std::string> kMethods = {"iterative", "iterative_context"};
constexpr int kSeeds = 5, kPerRun = 3;

// The known outcome of candidate `i` of (method m, seed s, workload w): a
// speedup if correct, 0 if wrong.
double outcome(int m, int s, int w, int i) {
  const int h = (7 * s + 5 * w + 3 * i + 11 * m) % 9;
  if (h < 3) return 0.0;  // wrong
  return 0.7 + 0.25 * h + 0.3 * m * (w == 1);  // method 1 is faster on 8p
}

void build(const std::string& path) {
  auto store = RunStore::open(path);
  const int64_t sweep = store->begin_or_resume_sweep("hand", "name: hand\n");
  int ordinal = 0;
  for (int m = 0; m < 2; ++m)
    for (int s = 0; s < kSeeds; ++s) {
      const std::string config = "method: " + kMethods[m] +
                                 "\nworkloads: [1p, 8p, 12p]\nbudget_per_workload: 3\nseeds: [" +
                                 std::to_string(s) + "]\nllm:\n  provider: synthetic\n";
      CellRecord cell;
      cell.sweep_id = sweep;
      cell.cell_key = "method=" + kMethods[m] + ",seed=" + std::to_string(s);
      cell.ordinal = ordinal++;
      cell.params_json = "{\"method\": \"" + kMethods[m] + "\", \"seed\": \"" + std::to_string(s) + "\"}";
      cell.config_text = config;
      const int64_t cell_id = store->put_cell(cell);
      const int64_t run = store->begin_or_resume_run(cell.cell_key, config, cell_id);
      for (int w = 0; w < 3; ++w)
        for (int i = 0; i < kPerRun; ++i) {
          SampleRecord sample;
          sample.run_id = run;
          sample.workload = kSuite[w];
          sample.method = kMethods[m];
          sample.seed = s;
          sample.sample_index = i;
          sample.prompt_user = "p" + std::to_string(i);
          sample.code = "def kernel(): pass  # " + std::to_string(i);
          const int64_t id = store->put_sample(sample).id;
          EvaluationRecord e;
          e.candidate_id = id;
          const double x = outcome(m, s, w, i);
          e.evaluation.verdict = x > 0 ? Verdict::correct : Verdict::numerics_mismatch;
          if (x > 0) {  // the store computes the speedup, 10 / (10 / x)
            e.evaluation.kernel_ms = 10.0 / x;
            e.evaluation.baseline_ms = 10.0;
          }
          e.evaluation.timing_kind = TimingKind::cpu_wall;
          store->put_evaluation(e);
        }
      store->finish_run(run, "finished");
    }
}

// -- the independent computation --------------------------------------------

struct Mix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

struct Run {
  int n = 0, c = 0;
  double best = 1.0;  // best correct speedup, 1.0 if none
};

Run run_of(int m, int s, int w) {
  Run r;
  bool timed = false;
  for (int i = 0; i < kPerRun; ++i) {
    double x = outcome(m, s, w, i);
    ++r.n;
    if (x <= 0) continue;
    ++r.c;
    if (!timed || x > r.best) r.best = x, timed = true;
  }
  return r;
}

// pick[w][j]: the seed used as the j-th draw of workload w.
using Pick = std::vector<std::vector<int>>;

double correctness(int m, const Pick& p) {
  double n = 0, c = 0;
  for (int w = 0; w < 3; ++w)
    for (int s : p[w]) n += run_of(m, s, w).n, c += run_of(m, s, w).c;
  return c / n;
}
double solved(int m, const Pick& p) {
  double total = 0;
  for (int w = 0; w < 3; ++w) {
    double k = 0;
    for (int s : p[w]) k += run_of(m, s, w).c > 0;
    total += k / p[w].size();
  }
  return total;
}
double geomean(int m, const Pick& p) {
  double logs = 0;
  for (int w = 0; w < 3; ++w) {
    double l = 0;
    for (int s : p[w]) l += std::log(std::max(1.0, run_of(m, s, w).best));
    logs += l / p[w].size();
  }
  return std::exp(logs / 3);
}
double iqm(int m, const Pick& p) {
  std::vector<double> v;
  for (int w = 0; w < 3; ++w)
    for (int s : p[w]) v.push_back(std::max(1.0, run_of(m, s, w).best));
  std::sort(v.begin(), v.end());
  size_t cut = v.size() / 4;
  double sum = 0;
  for (size_t i = cut; i + cut < v.size(); ++i) sum += v[i];
  return sum / (v.size() - 2 * cut);
}
double poi(const Pick& p) {  // A = method 1, B = method 0
  double total = 0;
  for (int w = 0; w < 3; ++w) {
    double wins = 0;
    for (int i : p[w])
      for (int j : p[w]) {
        double x = std::max(1.0, run_of(1, i, w).best), y = std::max(1.0, run_of(0, j, w).best);
        wins += x > y ? 1 : x == y ? 0.5 : 0;
      }
    total += wins / (p[w].size() * p[w].size());
  }
  return total / 3;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

TEST(CompareCommand, HandBuiltDatabaseMatchesAnIndependentComputation) {
  TempDb db;
  build(db.path());
  auto store = RunStore::open(db.path(), RunStore::Mode::read_only);
  auto input = collect_report_input(*store, std::nullopt, {});
  auto conditions = report_conditions(input);
  ASSERT_EQ(conditions.size(), 2u);
  const auto& a = find_condition(conditions, "method=iterative_context");
  const auto& b = find_condition(conditions, "method=iterative,seed=3");  // seeds are pooled
  EXPECT_EQ(a.method, "iterative_context");
  EXPECT_EQ(b.method, "iterative");
  EXPECT_THROW(find_condition(conditions, "method=autocomp"), std::invalid_argument);
  EXPECT_THROW(find_condition(conditions, "budget"), std::invalid_argument);

  const int resamples = 300;
  auto c = paired_comparison_json(a, b, "method", resamples);
  EXPECT_TRUE(c["paired"].get<bool>());
  EXPECT_EQ(c["seeds_a"], kSeeds);
  EXPECT_FALSE(c["few_seeds"].get<bool>());

  Pick all(3, {0, 1, 2, 3, 4});
  using F = double (*)(int, const Pick&);
  const std::map<std::string, F> metrics = {{"per_sample_correctness", correctness},
                                            {"solved", solved},
                                            {"geomean_speedup", geomean},
                                            {"iqm_speedup", iqm}};
  Mix rng{0x5eed};
  std::map<std::string, std::vector<double>> diffs;
  std::vector<double> pois;
  for (int r = 0; r < resamples; ++r) {
    Pick p(3);
    for (int w = 0; w < 3; ++w)
      for (int j = 0; j < kSeeds; ++j) p[w].push_back(static_cast<int>(rng.next() % kSeeds));
    for (const auto& [name, f] : metrics) diffs[name].push_back(f(1, p) - f(0, p));
    pois.push_back(poi(p));
  }
  for (const auto& [name, f] : metrics) {
    SCOPED_TRACE(name);
    const auto& d = c[name];
    EXPECT_NEAR(d["a"].get<double>(), f(1, all), 1e-12);
    EXPECT_NEAR(d["b"].get<double>(), f(0, all), 1e-12);
    EXPECT_NEAR(d["diff"].get<double>(), f(1, all) - f(0, all), 1e-12);
    EXPECT_NEAR(d["low"].get<double>(), quantile(diffs[name], 0.025), 1e-12);
    EXPECT_NEAR(d["high"].get<double>(), quantile(diffs[name], 0.975), 1e-12);
  }
  EXPECT_NEAR(c["p_improvement"]["value"].get<double>(), poi(all), 1e-12);
  EXPECT_NEAR(c["p_improvement"]["low"].get<double>(), quantile(pois, 0.025), 1e-12);
  EXPECT_NEAR(c["p_improvement"]["high"].get<double>(), quantile(pois, 0.975), 1e-12);
  // Method 1 is faster on 8p by construction.
  EXPECT_GT(c["geomean_speedup"]["diff"].get<double>(), 0.0);
  EXPECT_NE(c["reading"].get<std::string>().find("iterative_context is ahead of method=iterative"),
            std::string::npos)
      << c["reading"];
}

TEST(CompareCommand, SweepReportStatesPassAtKFastPAndRooflineOfTheHandBuiltDatabase) {
  TempDb db;
  build(db.path());
  auto store = RunStore::open(db.path(), RunStore::Mode::read_only);
  auto input = collect_report_input(*store, std::nullopt, {});
  input.costs["8p"] = {918e9, 1.64e9};  // a 1 ms floor on both roofs
  auto r = sweep_report_json(input);
  const auto& g = r["groups"][0];
  ASSERT_EQ(g["comparisons"].size(), 1u);
  EXPECT_EQ(g["comparisons"][0]["axis"], "method");
  const auto& cond = g["conditions"][1];  // iterative_context
  ASSERT_EQ(cond["label"], "method=iterative_context");
  // pass@k: the closed form per run, mean over runs; k=5 and 10 exceed n=3.
  ASSERT_EQ(cond["pass_at_k"].size(), 1u);
  double p1 = 0;
  for (int s = 0; s < kSeeds; ++s)
    for (int w = 0; w < 3; ++w) p1 += static_cast<double>(run_of(1, s, w).c) / kPerRun;
  EXPECT_NEAR(cond["pass_at_k"][0]["estimate"]["value"].get<double>(), p1 / 15, 1e-12);
  // fast_p: per seed, the share of workloads solved faster than p; mean over seeds.
  ASSERT_EQ(cond["fast_p"].size(), 5u);
  for (const auto& f : cond["fast_p"]) {
    double p = f["p"].get<double>(), sum = 0;
    for (int s = 0; s < kSeeds; ++s)
      for (int w = 0; w < 3; ++w) sum += run_of(1, s, w).c > 0 && run_of(1, s, w).best > p;
    EXPECT_NEAR(f["estimate"]["value"].get<double>(), sum / 15, 1e-12) << "p=" << p;
    EXPECT_LE(f["estimate"]["low"].get<double>(), f["estimate"]["value"].get<double>());
    EXPECT_GE(f["estimate"]["high"].get<double>(), f["estimate"]["value"].get<double>());
  }
  // Roofline: 8p's best kernel at 10 / best ms against a 1 ms floor, marked not meaningful.
  double best = 0;
  for (int m = 0; m < 2; ++m)
    for (int s = 0; s < kSeeds; ++s) best = std::max(best, run_of(m, s, 1).best);
  const auto& w8 = r["workloads"][1];
  ASSERT_EQ(w8["id"], "8p");
  const auto& roof = w8["best"][0]["roofline"];
  EXPECT_NEAR(roof["fraction"].get<double>(), 1.0 / (10.0 / best), 1e-12);
  EXPECT_NEAR(roof["baseline_fraction"].get<double>(), 0.1, 1e-12);
  EXPECT_FALSE(roof["meaningful"].get<bool>());
  EXPECT_TRUE(r["workloads"][0]["best"][0]["roofline"].is_null());  // 1p has no cost here
  auto md = sweep_report_markdown(r);
  EXPECT_NE(md.find("not meaningful (CPU host)"), std::string::npos);
  EXPECT_NE(md.find("pass@1"), std::string::npos);
  EXPECT_NE(md.find("fast_1.2"), std::string::npos);
}

}  // namespace
}  // namespace palladium
