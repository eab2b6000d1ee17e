#include "report/published_best.hpp"

namespace palladium {

std::optional<SittingView> published_by_sitting(const SittingRecord& s, int64_t best_candidate) {
  if (!s.error.empty() || s.kernels.size() != 2 || !s.baseline_ms || !(*s.baseline_ms > 0))
    return std::nullopt;
  if (s.kernels[0].candidate_id != best_candidate && s.kernels[1].candidate_id != best_candidate)
    return std::nullopt;
  SittingView v;
  for (const auto& k : s.kernels) {
    if (!k.kernel_ms || !k.kernel_ms_low || !k.kernel_ms_high || !(*k.kernel_ms > 0) ||
        !(*k.kernel_ms_low > 0))
      return std::nullopt;
    v.candidates.push_back(k.candidate_id);
    v.kernel_ms.push_back(*k.kernel_ms);
    v.kernel_low.push_back(*k.kernel_ms_low);
    v.kernel_high.push_back(*k.kernel_ms_high);
  }
  v.baseline_ms = *s.baseline_ms;
  v.timing_runs = s.timing_runs;
  v.timing_kind = s.timing_kind;
  v.faster = v.kernel_ms[1] < v.kernel_ms[0] ? 1 : 0;
  v.switched = v.candidates[v.faster] != best_candidate;
  v.overlap = v.kernel_high[v.faster] >= v.kernel_low[1 - v.faster];
  return v;
}

}  // namespace palladium
