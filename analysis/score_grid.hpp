// A condition's results as a grid of runs: one run per (workload, seed), the
// unit rliable (Agarwal et al. 2021) resamples. The statistics below read a
// grid through a Selection (which seeds of each workload to use, repeats
// allowed), so the same code gives the point estimate (every seed once) and
// each stratified bootstrap resample (seeds drawn with replacement within
// each workload; analysis/paired_comparison.hpp).
//
// Statistics over the selected runs R(w) of each workload w of the suite W:
//   correctness   = sum correct / sum candidates                (0 if none)
//   solved        = sum_w mean_{s in R(w)} [run solved]         (a count of workloads)
//   geomean       = exp(mean_w mean_{s in R(w)} log max(speedup, 1))
//   iqm           = interquartile mean of max(speedup, 1) over all selected runs
//                   (drop floor(n/4) runs at each end; scipy.stats.trim_mean(x, 0.25))
//   pass@k        = mean_w mean_{s in R(w)} pass@k(run)          (analysis/pass_at_k.hpp)
//   fast_p        = mean_w mean_{s in R(w)} [solved and speedup > p]
// With every seed selected once, solved, geomean and fast_p are the means over
// seeds of the per-seed suite metrics of analysis/metrics.hpp.
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_SCORE_GRID_HPP_
#define PALLADIUM_SEARCH_SCORE_GRID_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trajectory.hpp"

namespace palladium {

// One search of one workload.
struct RunScore {
  int candidates = 0;
  int correct = 0;
  double speedup = 1.0;  // speedup(w) of analysis/metrics.hpp (unclipped)
  bool solved() const { return correct > 0; }
};

struct ScoreGrid {
  std::vector<std::string> workloads;
  std::vector<int64_t> seeds;
  std::vector<std::vector<RunScore>> runs;  // [workload][seed]
};

// The grid of a condition's seeds, over the first seed's suite. Throws
// std::invalid_argument if `seeds` is empty or their suites differ.
ScoreGrid score_grid(const std::vector<SeedTrajectories>& seeds);

// The seeds (indices into ScoreGrid::seeds) each workload uses; one entry per workload.
using Selection = std::vector<std::vector<int>>;

// Every seed once.
Selection all_seeds(const ScoreGrid& grid);

double grid_correctness(const ScoreGrid& g, const Selection& s);
double grid_solved(const ScoreGrid& g, const Selection& s);
double grid_geomean(const ScoreGrid& g, const Selection& s);
double grid_iqm(const ScoreGrid& g, const Selection& s);
double grid_pass_at_k(const ScoreGrid& g, const Selection& s, int k);
double grid_fast_p(const ScoreGrid& g, const Selection& s, double p);

// True when every run with candidates has at least k (pass@k has an unbiased
// estimate); runs without candidates count as 0.
bool pass_at_k_defined(const ScoreGrid& g, int k);

// The interquartile mean of `values` (copied, then sorted). NaN if empty.
double interquartile_mean(std::vector<double> values);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_SCORE_GRID_HPP_
