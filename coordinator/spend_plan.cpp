#include "coordinator/spend_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/sweep_config.hpp"
#include "coordinator/dry_run.hpp"
#include "coordinator/run_setup.hpp"
#include "llm/prefix_cache_estimate.hpp"
#include "llm/synthetic_family.hpp"
#include "llm/synthetic_provider.hpp"
#include "search/budget.hpp"
#include "search/method_config.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

void appendf(std::string& out, const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  out += buf;
}

// The dry run's model, with every prompt it is asked passed through the cache estimate
// (the text a provider sees: system part first).
class CacheWatching : public Provider {
 public:
  CacheWatching(std::shared_ptr<Provider> inner, PrefixCacheEstimate& cache)
      : inner_(std::move(inner)), cache_(cache) {}
  ChatResponse complete(const ChatRequest& r) override {
    cache_.add(r.system_prompt + "\n" + r.user_prompt);
    return inner_->complete(r);
  }
  std::string name() const override { return inner_->name(); }

 private:
  std::shared_ptr<Provider> inner_;
  PrefixCacheEstimate& cache_;
};

PlanDemand demand_of(const RunConfig& config, const std::string& origin, const fs::path& home,
                     std::optional<double> output_per_call, PrefixCacheEstimate& cache) {
  const auto searches = search_specs(config, origin, home);
  const auto synthetic_dir = home / "llm" / "synthetic";
  const auto covered = synthetic_workloads(synthetic_dir);
  CacheWatching model(make_synthetic_provider(synthetic_dir), cache);
  PlanDemand d;
  d.reserved_output_per_call = config.llm.sampling.max_output_tokens;
  for (const auto& spec : searches) {
    auto strategy = make_strategy(spec.method, spec.brief, Budget(spec.budget, spec.method.counts),
                                  spec.menus, spec.seed);
    const bool covers = std::find(covered.begin(), covered.end(), spec.brief.id) != covered.end();
    DryRunSearch s = dry_run_search(*strategy, spec.brief.id, spec.seed, model, covers);
    d.calls += s.calls();
    d.samples += s.calls();
    d.input_tokens += static_cast<double>(s.usage.prompt_tokens);
    // The synthetic model's answers are short: a real model may write up to the limit.
    d.output_tokens += static_cast<double>(s.calls()) *
                       output_per_call.value_or(std::max<double>(
                           static_cast<double>(s.usage.output_tokens()) / std::max(1, s.calls()),
                           config.llm.sampling.max_output_tokens * 0.5));
    for (const auto& [role, n] : s.samples)
      if (is_candidate_role(role)) d.candidates += n;
    d.longest_chain = std::max(d.longest_chain, static_cast<double>(s.rounds));
  }
  return d;
}

std::string hours(double s) {
  char buf[64];
  if (std::isinf(s)) return "never (a call's worst case exceeds the window's limit)";
  if (s < 120) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

}  // namespace

bool parse_plan_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && !text.empty() && out >= 0;
}

// Applies "key=value,..." (or a named tier) to `l`; "" on success, else what was wrong.
std::string apply_tier_limits(const std::string& spec, PlanLimits& l) {
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "gemini-tier1") {
      l.requests_per_minute = 1000, l.tokens_per_minute = 1e6, l.usd_per_window = 10,
      l.window_s = 600;
      continue;
    }
    if (item == "gemini-tier2") {
      l.requests_per_minute = 2000, l.tokens_per_minute = 3e6, l.usd_per_window = 200,
      l.window_s = 600;
      continue;
    }
    const auto eq = item.find('=');
    double v = 0;
    if (eq == std::string::npos || !parse_plan_number(item.substr(eq + 1), v))
      return "'" + item + "' is not key=number";
    const std::string key = item.substr(0, eq);
    if (key == "rpm") l.requests_per_minute = v;
    else if (key == "tpm") l.tokens_per_minute = v;
    else if (key == "usd_per_window") l.usd_per_window = v;
    else if (key == "window_s") l.window_s = v;
    else if (key == "concurrency") l.max_concurrent = static_cast<int>(v);
    else return "unknown limit '" + key + "' (rpm, tpm, usd_per_window, window_s, concurrency)";
  }
  return "";
}

std::string spend_plan_text(const PlanRequest& r, const fs::path& home) {
  const std::string& path = r.path;
  const int chips = r.chips;
  const std::optional<double>& output_per_call = r.output_per_call;
  const std::optional<double>& cached_share = r.cached_share;
  PlanAssumptions a = r.assumptions;
  std::string out;
  std::vector<std::pair<std::string, RunConfig>> runs;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    if (root.IsMap() && root["grid"]) {
      const SweepConfig sweep = load_sweep_config(path);
      for (const auto& cell : sweep.cells) runs.push_back({cell.key, cell.config});
    } else {
      runs.push_back({"", load_run_config(path)});
    }
  } catch (const std::exception& e) {
    throw PlanError(2, e.what());
  }
  PlanDemand total;
  const LlmConfig& llm = runs.front().second.llm;
  bool batch = false;
  // One cache for the whole sweep: a provider's cache is the account's, across cells.
  PrefixCacheEstimate cache;
  try {
    for (const auto& [key, config] : runs) {
      const PlanDemand d = demand_of(config, path, home, output_per_call, cache);
      total.calls += d.calls;
      total.samples += d.samples;
      total.input_tokens += d.input_tokens;
      total.output_tokens += d.output_tokens;
      total.candidates += d.candidates;
      total.longest_chain = std::max(total.longest_chain, d.longest_chain);
      total.reserved_output_per_call =
          std::max(total.reserved_output_per_call, d.reserved_output_per_call);
      batch = batch || config.llm.mode == "batch";
    }
  } catch (const std::exception& e) {
    throw PlanError(1, path + ": " + e.what());
  }
  PlanLimits l;
  l.max_concurrent = llm.max_concurrent;
  l.requests_per_minute = llm.requests_per_minute;
  l.tokens_per_minute = llm.tokens_per_minute;
  l.usd_per_window = llm.max_usd_per_window;
  l.window_s = llm.spend_window_s;
  l.chips = chips;
  if (!r.tiers.empty()) {
    const std::string err = apply_tier_limits(r.tiers, l);
    if (!err.empty()) throw PlanError(2, "--tier-limits: " + err);
  }
  std::optional<Price> price;
  std::string label = "llm.provider " + llm.provider + " (offline: costs nothing)";
  if (llm.remote()) {
    label = llm.provider + " " + llm.model;
    try {
      price = PriceTable::load((home / llm.prices).string()).find(llm.provider, llm.model);
    } catch (const std::exception& e) {
      throw PlanError(2, e.what());
    }
    if (!price) label += " (no price in " + llm.prices + ")";
  }
  a.cached_share = cached_share.value_or(cache.share());
  const PlanEstimate e = estimate_plan(total, l, a, price);
  appendf(out, "plan of %s: %zu run%s, %s\n", path.c_str(), runs.size(),
          runs.size() == 1 ? "" : "s", label.c_str());
  appendf(out, "  calls %.0f  candidates %.0f  longest chain of dependent calls %.0f\n",
          total.calls, total.candidates, total.longest_chain);
  appendf(out, "  input tokens %.0f (cached %.0f%s)  output tokens %.0f%s\n", total.input_tokens,
              e.cached_tokens,
              cached_share ? "" : ", estimated from the prompts' shared prefixes",
              total.output_tokens,
              output_per_call ? "" : " (at least half of llm.max_output_tokens per call)");
  if (price)
    appendf(out, e.usd_online < 1 ? "  dollars: online $%.5f, batch $%.5f%s\n"
                                 : "  dollars: online $%.2f, batch $%.2f%s\n",
                e.usd_online, e.usd_batch,
                batch ? " (this config runs in batch mode)" : "");
  appendf(out, "  assumptions: %g s per call, %g s per evaluation, %g s for the evaluation "
              "workers to start, %d chip%s, cached share %.2f\n",
              a.latency_s, a.eval_s, a.startup_s, chips, chips == 1 ? "" : "s", a.cached_share);
  appendf(out, "  time under each limit (the largest binds):\n");
  for (const auto& t : e.limits)
    appendf(out, "    %-17s %10s%s\n", t.limit.c_str(), hours(t.seconds).c_str(),
                t.limit == e.binding ? "   <- binds" : "");
  // The exact seconds too, for comparing with a measured run (scripts/bench_plan.sh).
  appendf(out, "  predicted wall time %s (%.0f s), bound by %s; to relax it: %s",
              hours(e.wall_s).c_str(), e.wall_s,
              e.binding.c_str(), e.limits.front().relax.c_str());
  if (e.limits.size() > 1)
    appendf(out, " (then %s binds at %s)", e.limits[1].limit.c_str(), hours(e.next_s).c_str());
  appendf(out, "\n");
  return out;
}

}  // namespace palladium
