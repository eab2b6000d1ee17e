#include "llm/throughput_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace palladium {
namespace {

// Seconds until the last of `units` leaves a token bucket of `per_minute` as the gateway
// builds it: capacity max(1, per_minute / 60), full at the start, refilled at
// (per_minute - capacity) / 60 a second.
double bucket_seconds(double units, double per_minute) {
  const double burst = std::max(1.0, per_minute / 60.0);
  const double refill = std::max(1e-9, (per_minute - burst) / 60.0);
  return std::max(0.0, units - burst) / refill;
}

}  // namespace

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
  const double step = a.latency_s + a.eval_s;  // one call answered, its candidate evaluated
  auto add = [&](const std::string& name, double s, const std::string& relax) {
    e.limits.push_back({name, s + a.startup_s, relax});
  };
  add("concurrency", d.calls * a.latency_s / std::max(1, l.max_concurrent) + a.eval_s,
      "raise llm.max_concurrent, or llm.samples_per_call (fewer, larger calls)");
  if (l.requests_per_minute > 0)
    add("requests/min", bucket_seconds(d.calls, l.requests_per_minute) + step,
        "a higher requests-per-minute tier, or llm.samples_per_call (n samples per request)");
  if (l.tokens_per_minute > 0)
    add("tokens/min", bucket_seconds(d.input_tokens + d.output_tokens, l.tokens_per_minute) + step,
        "a higher tokens-per-minute tier, or a lower llm.max_output_tokens");
  if (l.usd_per_window && *l.usd_per_window > 0 && price && d.calls > 0) {
    const double limit = *l.usd_per_window;
    const double c = e.usd_online / d.calls;
    Usage worst;
    worst.prompt_tokens = static_cast<int64_t>(d.input_tokens / d.calls);
    worst.completion_tokens = static_cast<int64_t>(
        std::max(d.reserved_output_per_call, d.output_tokens / d.calls));
    const double w = std::max(c, cost_usd(*price, worst, false));
    double s = std::numeric_limits<double>::infinity();  // a call's worst case never fits
    if (w <= limit) {
      const double usable = limit - w + c;
      const double occupancy = d.calls * (c * l.window_s + w * a.latency_s);
      s = std::max(0.0, occupancy / usable - l.window_s) + step;
    }
    add("spend rate", s,
        "llm.mode: batch (half the dollars per window), a higher spend tier, a cheaper model, "
        "or a lower llm.max_output_tokens (the worst case each running call holds)");
  }
  add("TPU chips", d.candidates * a.eval_s / std::max(1, l.chips) + a.latency_s,
      "more chips (--chips), or a cheaper evaluation (fewer numerics seeds)");
  if (d.longest_chain > 0)
    add("sequential chain", d.longest_chain * step,
        "shorter chains: more seeds or workloads in parallel, or a method that fans out (beam)");
  std::stable_sort(e.limits.begin(), e.limits.end(),
                   [](const PlanLimitTime& x, const PlanLimitTime& y) { return x.seconds > y.seconds; });
  e.wall_s = e.limits.front().seconds;
  e.binding = e.limits.front().limit;
  e.next_s = e.limits.size() > 1 ? e.limits[1].seconds : 0;
  return e;
}

}  // namespace palladium
