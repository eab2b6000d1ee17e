#include "analysis/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace palladium {

std::vector<WorkloadSummary> summarize_workloads(
    const std::vector<std::string>& workload_ids,
    const std::vector<CandidateResult>& results) {
  std::vector<WorkloadSummary> out;
  out.reserve(workload_ids.size());
  std::unordered_map<std::string, size_t> index;
  for (const auto& id : workload_ids) {
    if (!index.emplace(id, out.size()).second) {
      throw std::invalid_argument("summarize_workloads: duplicate workload " +
                                  id);
    }
    WorkloadSummary s;
    s.id = id;
    out.push_back(std::move(s));
  }

  // Track "has a timed correct candidate" separately: best_speedup starts at
  // 1.0 (the no-correct value) but a correct kernel slower than XLA must
  // still show its real speedup below 1.0.
  std::vector<bool> timed(out.size(), false);
  for (const auto& r : results) {
    auto it = index.find(r.workload);
    if (it == index.end()) continue;
    WorkloadSummary& s = out[it->second];
    ++s.candidates;
    ++s.verdicts[std::string(to_string(r.verdict))];
    if (r.verdict != Verdict::correct) continue;
    ++s.correct;
    if (!r.speedup) continue;
    if (!timed[it->second] || *r.speedup > s.best_speedup) {
      s.best_speedup = *r.speedup;
      timed[it->second] = true;
    }
  }
  return out;
}

SuiteSummary summarize_suite(const std::vector<WorkloadSummary>& workloads) {
  SuiteSummary suite;
  double log_sum = 0.0;
  for (const auto& w : workloads) {
    ++suite.workloads;
    suite.candidates += w.candidates;
    suite.correct += w.correct;
    if (w.correct > 0) ++suite.solved;
    log_sum += std::log(std::max(w.best_speedup, 1.0));
  }
  if (suite.candidates > 0) {
    suite.per_sample_correctness =
        static_cast<double>(suite.correct) / suite.candidates;
  }
  if (suite.workloads > 0) {
    suite.geomean_speedup = std::exp(log_sum / suite.workloads);
  }
  return suite;
}

}  // namespace palladium
