#include "analysis/pass_at_k.hpp"

#include <stdexcept>
#include <string>

namespace palladium {

double pass_at_k(int n, int c, int k) {
  if (n < 0 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument("pass_at_k: need 0 <= c <= n and 1 <= k <= n, got n=" +
                                std::to_string(n) + " c=" + std::to_string(c) +
                                " k=" + std::to_string(k));
  if (n - c < k) return 1.0;  // every k-subset holds a correct candidate
  double all_wrong = 1.0;     // C(n-c, k) / C(n, k)
  for (int i = n - c + 1; i <= n; ++i) all_wrong *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - all_wrong;
}

std::optional<double> suite_pass_at_k(const std::vector<PassCount>& workloads, int k) {
  double sum = 0.0;
  bool measured = false;
  for (const auto& w : workloads) {
    if (w.candidates == 0) continue;  // counts as 0
    if (w.candidates < k) return std::nullopt;
    measured = true;
    sum += pass_at_k(w.candidates, w.correct, k);
  }
  if (!measured) return std::nullopt;
  return sum / static_cast<double>(workloads.size());
}

}  // namespace palladium
