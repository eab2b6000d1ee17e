#include "analysis/score_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "analysis/metrics.hpp"
#include "analysis/pass_at_k.hpp"

namespace palladium {
namespace {

// mean_w mean_{s in R(w)} f(run)
template <typename F>
double mean_of_means(const ScoreGrid& g, const Selection& sel, F f) {
  if (g.workloads.empty()) return 0.0;
  double total = 0.0;
  for (size_t w = 0; w < g.workloads.size(); ++w) {
    if (sel[w].empty()) continue;
    double sum = 0.0;
    for (int s : sel[w]) sum += f(g.runs[w][static_cast<size_t>(s)]);
    total += sum / static_cast<double>(sel[w].size());
  }
  return total / static_cast<double>(g.workloads.size());
}

}  // namespace

ScoreGrid score_grid(const std::vector<SeedTrajectories>& seeds) {
  if (seeds.empty()) throw std::invalid_argument("score_grid: no seeds");
  ScoreGrid g;
  g.workloads = seeds.front().suite;
  g.runs.assign(g.workloads.size(), {});
  for (const auto& seed : seeds) {
    if (seed.suite != g.workloads)
      throw std::invalid_argument("score_grid: seed " + std::to_string(seed.seed) +
                                  " has another suite than seed " +
                                  std::to_string(seeds.front().seed));
    g.seeds.push_back(seed.seed);
    std::vector<CandidateResult> results;
    for (const auto& [w, steps] : seed.by_workload)
      for (const auto& st : steps) results.push_back({w, st.verdict, st.speedup});
    auto summaries = summarize_workloads(g.workloads, results);
    for (size_t w = 0; w < summaries.size(); ++w)
      g.runs[w].push_back({summaries[w].candidates, summaries[w].correct, summaries[w].best_speedup});
  }
  return g;
}

Selection all_seeds(const ScoreGrid& grid) {
  std::vector<int> every(grid.seeds.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int>(i);
  return Selection(grid.workloads.size(), every);
}

double grid_correctness(const ScoreGrid& g, const Selection& sel) {
  long candidates = 0, correct = 0;
  for (size_t w = 0; w < g.workloads.size(); ++w)
    for (int s : sel[w]) {
      candidates += g.runs[w][static_cast<size_t>(s)].candidates;
      correct += g.runs[w][static_cast<size_t>(s)].correct;
    }
  return candidates ? static_cast<double>(correct) / static_cast<double>(candidates) : 0.0;
}

double grid_solved(const ScoreGrid& g, const Selection& sel) {
  return static_cast<double>(g.workloads.size()) *
         mean_of_means(g, sel, [](const RunScore& r) { return r.solved() ? 1.0 : 0.0; });
}

double grid_geomean(const ScoreGrid& g, const Selection& sel) {
  return std::exp(
      mean_of_means(g, sel, [](const RunScore& r) { return std::log(std::max(r.speedup, 1.0)); }));
}

double interquartile_mean(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t cut = v.size() / 4;
  double sum = 0.0;
  for (size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - 2 * cut);
}

double grid_iqm(const ScoreGrid& g, const Selection& sel) {
  std::vector<double> v;
  for (size_t w = 0; w < g.workloads.size(); ++w)
    for (int s : sel[w]) v.push_back(std::max(g.runs[w][static_cast<size_t>(s)].speedup, 1.0));
  return interquartile_mean(std::move(v));
}

bool pass_at_k_defined(const ScoreGrid& g, int k) {
  bool any = false;
  for (const auto& row : g.runs)
    for (const auto& r : row) {
      if (r.candidates == 0) continue;
      if (r.candidates < k) return false;
      any = true;
    }
  return any;
}

double grid_pass_at_k(const ScoreGrid& g, const Selection& sel, int k) {
  return mean_of_means(g, sel, [k](const RunScore& r) {
    return r.candidates == 0 ? 0.0 : pass_at_k(r.candidates, r.correct, k);
  });
}

double grid_fast_p(const ScoreGrid& g, const Selection& sel, double p) {
  return mean_of_means(g, sel,
                       [p](const RunScore& r) { return r.solved() && r.speedup > p ? 1.0 : 0.0; });
}

}  // namespace palladium
