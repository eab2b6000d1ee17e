#include "llm/throughput_plan.hpp"

#include <algorithm>
#include <cmath>

namespace palladium {

PlanEstimate estimate_plan(const PlanDemand& d, const PlanLimits& l, const PlanAssumptions& a,
                           const std::optional<Price>& price) {
  PlanEstimate e;
  e.cached_tokens = std::round(d.input_tokens * std::clamp(a.cached_share, 0.0, 1.0));
  if (price) {
    Usage u;
    u.prompt_tokens = static_cast<int64_t>(d.input_tokens);
    u.cached_prompt_tokens = static_cast<int64_t>(e.cached_tokens);
    u.completion_tokens = static_cast<int64_t>(d.output_tokens);
    e.usd_online = cost_usd(*price, u, false);
    e.usd_batch = cost_usd(*price, u, true);
  }
  auto add = [&](const std::string& name, double s, const std::string& relax) {
    e.limits.push_back({name, s, relax});
  };
  add("concurrency", d.calls * a.latency_s / std::max(1, l.max_concurrent),
      "raise llm.max_concurrent, or llm.samples_per_call (fewer, larger calls)");
  if (l.requests_per_minute > 0)
    add("requests/min", d.calls / l.requests_per_minute * 60,
        "a higher requests-per-minute tier, or llm.samples_per_call (n samples per request)");
  if (l.tokens_per_minute > 0)
    add("tokens/min", (d.input_tokens + d.output_tokens) / l.tokens_per_minute * 60,
        "a higher tokens-per-minute tier, or a lower llm.max_output_tokens");
  if (l.usd_per_window && *l.usd_per_window > 0 && price)
    add("spend rate", e.usd_online / *l.usd_per_window * l.window_s,
        "llm.mode: batch (half the dollars per window), a higher spend tier, or a cheaper model");
  add("TPU chips", d.candidates * a.eval_s / std::max(1, l.chips),
      "more chips (--chips), or a cheaper evaluation (fewer numerics seeds)");
  if (d.longest_chain > 0)
    add("sequential chain", d.longest_chain * (a.latency_s + a.eval_s),
        "shorter chains: more seeds or workloads in parallel, or a method that fans out (beam)");
  std::stable_sort(e.limits.begin(), e.limits.end(),
                   [](const PlanLimitTime& x, const PlanLimitTime& y) { return x.seconds > y.seconds; });
  e.wall_s = e.limits.front().seconds;
  e.binding = e.limits.front().limit;
  e.next_s = e.limits.size() > 1 ? e.limits[1].seconds : 0;
  return e;
}

}  // namespace palladium
