#include "report/sweep_report_sittings.hpp"

#include <map>
#include <utility>

#include "report/published_best.hpp"

namespace palladium {

namespace {

using Search = std::pair<std::string, int64_t>;  // workload, seed

void apply(ReportCell& cell) {
  // Each search's best correct kernel by the evaluations (the first of equals, as the run
  // report's best_of).
  std::map<Search, const ReportCandidate*> best;
  for (const auto& k : cell.candidates) {
    if (k.verdict != Verdict::correct || !k.speedup) continue;
    auto& b = best[{k.workload, k.seed}];
    if (!b || *k.speedup > *b->speedup) b = &k;
  }
  std::map<Search, SittingView> views;
  for (const auto& s : cell.sittings) {
    auto b = best.find({s.workload, s.seed});
    if (b == best.end()) continue;
    if (auto v = published_by_sitting(s, b->second->id))
      views[b->first] = std::move(*v);  // later sittings replace earlier ones
  }
  cell.sittings.clear();
  for (const auto& [search, v] : views) {
    ++cell.sitting_bests;
    if (v.overlap) ++cell.sitting_unsettled;
  }
  for (auto& k : cell.candidates) {
    if (k.verdict != Verdict::correct || !k.speedup) continue;
    auto it = views.find({k.workload, k.seed});
    if (it == views.end()) continue;
    const SittingView& v = it->second;
    k.evaluated_speedup = k.speedup;
    bool re_timed = false;
    for (size_t i = 0; i < v.candidates.size(); ++i) {
      if (v.candidates[i] != k.id) continue;
      re_timed = true;
      k.speedup = v.speedup(i);
      k.kernel_ms = v.kernel_ms[i];
      k.kernel_ms_low = v.kernel_low[i];
      k.kernel_ms_high = v.kernel_high[i];
      k.baseline_ms = v.baseline_ms;
      k.timing_runs = v.timing_runs;
      k.sitting = i == v.faster ? ReportCandidate::Sitting::published
                                : ReportCandidate::Sitting::runner_up;
      k.sitting_unsettled = v.overlap;
    }
    if (!re_timed && *k.speedup > v.published_speedup()) k.speedup = v.published_speedup();
  }
}

}  // namespace

SweepReportInput with_published_bests(SweepReportInput input) {
  for (auto& cell : input.cells) apply(cell);
  return input;
}

}  // namespace palladium
