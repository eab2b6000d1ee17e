#include "report/llm_usage_report.hpp"

#include <cstdio>

namespace palladium {
namespace {

// Offline providers cost nothing and have no prompt cache; their calls are not "API calls".
bool offline(const std::string& provider) {
  return provider == "synthetic" || provider == "replay" || provider == "hand_tuned";
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string count(int64_t v) { return std::to_string(v); }

nlohmann::json share(int64_t answers, int64_t prompt, int64_t output, double usd) {
  return {{"answers", answers}, {"prompt_tokens", prompt}, {"output_tokens", output}, {"usd", usd}};
}

}  // namespace

std::optional<double> LlmUsageSummary::cache_hit_share() const {
  if (prompt_tokens <= 0) return std::nullopt;
  return static_cast<double>(cached_prompt_tokens) / static_cast<double>(prompt_tokens);
}

LlmUsageSummary summarize_llm_usage(const RunStore& store, int64_t run_id) {
  LlmUsageSummary u;
  for (const auto& c : store.llm_calls(run_id)) {
    ++u.calls;
    if (!c.batch_id.empty()) ++u.batch_calls;
    if (!offline(c.provider)) ++u.api_calls;
    u.prompt_tokens += c.prompt_tokens;
    u.cached_prompt_tokens += c.cached_prompt_tokens;
    u.output_tokens += c.completion_tokens + c.thinking_tokens;
    if (c.cost_usd)
      u.cost_usd += *c.cost_usd;
    else if (!offline(c.provider) && c.status == "ok")
      u.cost_complete = false;
    if (c.cache_saved_usd) u.cache_saved_usd = u.cache_saved_usd.value_or(0.0) + *c.cache_saved_usd;
  }
  for (const auto& a : store.llm_attribution(run_id)) {
    u.paid_answers += a.paid_answers;
    u.reused_answers += a.reused_answers;
    u.paid_prompt_tokens += a.paid_prompt_tokens;
    u.paid_output_tokens += a.paid_output_tokens;
    u.reused_prompt_tokens += a.reused_prompt_tokens;
    u.reused_output_tokens += a.reused_output_tokens;
    u.paid_usd += a.paid_usd;
    u.reused_usd += a.reused_usd;
    u.truncated += a.truncated;
    if (a.truncated > 0) u.truncated_by_workload[a.workload] = a.truncated;
  }
  return u;
}

nlohmann::json llm_usage_json(const LlmUsageSummary& u) {
  auto hit = u.cache_hit_share();
  return {{"calls", u.calls},
          {"batch_calls", u.batch_calls},
          {"api_calls", u.api_calls},
          {"prompt_tokens", u.prompt_tokens},
          {"cached_prompt_tokens", u.cached_prompt_tokens},
          {"cache_hit_share", hit ? nlohmann::json(*hit) : nlohmann::json()},
          {"cache_saved_usd", u.cache_saved_usd ? nlohmann::json(*u.cache_saved_usd) : nlohmann::json()},
          {"output_tokens", u.output_tokens},
          {"cost_usd", u.cost_usd},
          {"cost_complete", u.cost_complete},
          {"paid", share(u.paid_answers, u.paid_prompt_tokens, u.paid_output_tokens, u.paid_usd)},
          {"reused", share(u.reused_answers, u.reused_prompt_tokens, u.reused_output_tokens,
                           u.reused_usd)},
          {"alone_usd", u.alone_usd()},
          {"truncated", u.truncated},
          {"truncated_by_workload", u.truncated_by_workload}};
}

std::string llm_usage_text(const LlmUsageSummary& u) {
  // A reused answer with a price was paid by some API call, even if this run made none.
  if (u.api_calls == 0 && u.reused_usd == 0 && u.truncated == 0) return "";
  std::string out = "\nLLM: " + count(u.calls) + " calls";
  if (u.batch_calls > 0) out += " (" + count(u.batch_calls) + " in batch jobs, at the batch price)";
  out += ", " + count(u.prompt_tokens) + " prompt / " + count(u.output_tokens) +
         " output tokens, " + fmt("$%.4f", u.cost_usd) +
         (u.cost_complete ? "" : " (some calls unpriced)") + "\n";
  if (auto hit = u.cache_hit_share()) {
    out += "  prompt cache            " + fmt("%.1f%%", 100.0 * *hit) + " of prompt tokens (" +
           count(u.cached_prompt_tokens) + ") served from the provider's cache";
    out += u.cache_saved_usd ? ", which saved " + fmt("$%.4f", *u.cache_saved_usd) + "\n"
                             : " (no price: savings unknown)\n";
  }
  out += "  answers                 " + count(u.paid_answers) + " paid by this run (" +
         count(u.paid_prompt_tokens) + " prompt / " + count(u.paid_output_tokens) +
         " output tokens, " + fmt("$%.4f", u.paid_usd) + "), " + count(u.reused_answers) +
         " reused from the response cache (" + count(u.reused_prompt_tokens) + " / " +
         count(u.reused_output_tokens) + ", " + fmt("$%.4f", u.reused_usd) +
         ", charged to the run that paid); alone it would cost " + fmt("$%.4f", u.alone_usd()) +
         "\n";
  if (u.truncated > 0) {
    std::string per;
    for (const auto& [w, n] : u.truncated_by_workload)
      per += (per.empty() ? "" : ", ") + w + " " + count(n);
    out += "  cut off at output limit " + count(u.truncated) + " answers (" + per +
           "); raise llm.max_output_tokens if that is most of them\n";
  }
  return out;
}

}  // namespace palladium
