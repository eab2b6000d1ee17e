// pass@k: the chance that at least one of k samples drawn from a workload's
// n recorded candidates is correct, with the unbiased estimator of Chen et
// al. 2021 (Codex) that KernelBench also uses:
//
//   pass@k(w) = 1 - C(n - c, k) / C(n, k)      (n candidates, c correct, k <= n)
//   pass@k    = mean over the suite's workloads of pass@k(w)
//
// The ratio of binomials is evaluated as prod_{i = n-c+1}^{n} (1 - k / i),
// which never overflows. A suite workload with no candidate at all counts as
// 0 and does not limit k; a k above some other workload's n has no unbiased
// estimate, so suite_pass_at_k returns nullopt for it (the report shows only
// the k that every measured workload allows).
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_PASS_AT_K_HPP_
#define PALLADIUM_SEARCH_PASS_AT_K_HPP_

#include <optional>
#include <vector>

namespace palladium {

// The k the report states, KernelBench's.
inline const std::vector<int> kPassAtK = {1, 5, 10};

// pass@k of one workload. Throws std::invalid_argument unless
// 0 <= c <= n and 1 <= k <= n.
double pass_at_k(int n, int c, int k);

struct PassCount {
  int candidates = 0;  // n
  int correct = 0;     // c
};

// The suite mean, or nullopt when some workload with candidates has fewer than k
// (or no workload has any).
std::optional<double> suite_pass_at_k(const std::vector<PassCount>& workloads, int k);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_PASS_AT_K_HPP_
