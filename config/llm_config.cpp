#include "config/llm_config.hpp"

#include <algorithm>

#include "llm/synthetic_family.hpp"
#include "protocol/taxonomy.hpp"
#include "workloads/workload_catalog.hpp"

namespace palladium {

LlmConfig parse_llm_config(const ConfigReader& r, const YAML::Node& node) {
  LlmConfig c;
  if (node) {
    r.check_keys(node, "llm",
                 {"provider", "corpus", "model", "base_url", "api_key_env", "temperature", "top_p",
                  "max_output_tokens", "thinking_budget", "thinking_level", "reasoning_effort",
                  "max_tokens_field", "samples_per_call", "max_concurrent", "requests_per_minute",
                  "tokens_per_minute", "max_attempts", "timeout_s", "max_usd", "prices",
                  "synthetic", "fold_system_prompt", "send_seed", "prompt_shortfall",
                  "max_usd_per_window", "spend_window_s", "max_usd_per_10min", "call_deadline_s",
                  "adaptive_concurrency", "mode", "batch_collect_s", "batch_poll_s",
                  "batch_journal", "batch_roles", "online_methods"});
    r.get(node, "provider", "llm.provider", c.provider);
    r.get(node, "corpus", "llm.corpus", c.corpus);
    r.get(node, "model", "llm.model", c.model);
    r.get(node, "base_url", "llm.base_url", c.base_url);
    r.get(node, "api_key_env", "llm.api_key_env", c.api_key_env);
    auto optional_number = [&](const char* key, std::optional<double>& out, double lo, double hi) {
      if (!node[key]) return;
      double v = 0;
      r.get_number(node, key, std::string("llm.") + key, v, lo, hi);
      out = v;
    };
    optional_number("temperature", c.sampling.temperature, 0, 2);
    optional_number("top_p", c.sampling.top_p, 0, 1);
    r.get_int(node, "max_output_tokens", "llm.max_output_tokens", c.sampling.max_output_tokens, 1,
              1000000);
    if (node["thinking_budget"]) {
      int b = 0;
      r.get_int(node, "thinking_budget", "llm.thinking_budget", b, -1, 1000000);
      c.sampling.thinking_budget = b;
    }
    r.get(node, "thinking_level", "llm.thinking_level", c.sampling.thinking_level);
    r.get(node, "reasoning_effort", "llm.reasoning_effort", c.sampling.reasoning_effort);
    r.get(node, "max_tokens_field", "llm.max_tokens_field", c.max_tokens_field);
    r.get(node, "fold_system_prompt", "llm.fold_system_prompt", c.fold_system_prompt);
    r.get(node, "send_seed", "llm.send_seed", c.send_seed);
    r.get(node, "prompt_shortfall", "llm.prompt_shortfall", c.prompt_shortfall);
    if (c.prompt_shortfall != "error" && c.prompt_shortfall != "warn")
      r.fail("llm.prompt_shortfall", "'" + c.prompt_shortfall + "' is neither error nor warn");
    r.get_int(node, "samples_per_call", "llm.samples_per_call", c.samples_per_call, 0, 64);
    r.get_int(node, "max_concurrent", "llm.max_concurrent", c.max_concurrent, 1, 1024);
    r.get_number(node, "requests_per_minute", "llm.requests_per_minute", c.requests_per_minute, 0,
                 1e7);
    r.get_number(node, "tokens_per_minute", "llm.tokens_per_minute", c.tokens_per_minute, 0, 1e12);
    r.get_int(node, "max_attempts", "llm.max_attempts", c.max_attempts, 1, 100);
    r.get_number(node, "timeout_s", "llm.timeout_s", c.timeout_s, 0.001, 86400);
    optional_number("max_usd", c.max_usd, 0, 1e9);
    if (node["max_usd_per_window"] && node["max_usd_per_10min"])
      r.fail("llm.max_usd_per_10min", "give either max_usd_per_window or max_usd_per_10min");
    if (node["max_usd_per_10min"] && node["spend_window_s"])
      r.fail("llm.spend_window_s", "max_usd_per_10min has its own 600 s window");
    optional_number("max_usd_per_window", c.max_usd_per_window, 0.000001, 1e9);
    optional_number("max_usd_per_10min", c.max_usd_per_window, 0.000001, 1e9);
    r.get_number(node, "spend_window_s", "llm.spend_window_s", c.spend_window_s, 1, 86400 * 7);
    optional_number("call_deadline_s", c.call_deadline_s, 0.001, 86400 * 7);
    r.get(node, "adaptive_concurrency", "llm.adaptive_concurrency", c.adaptive_concurrency);
    r.get(node, "mode", "llm.mode", c.mode);
    if (c.mode != "online" && c.mode != "batch")
      r.fail("llm.mode", "'" + c.mode + "' is neither online nor batch");
    r.get_number(node, "batch_collect_s", "llm.batch_collect_s", c.batch_collect_s, 0.001, 3600);
    r.get_number(node, "batch_poll_s", "llm.batch_poll_s", c.batch_poll_s, 0.001, 86400);
    r.get(node, "batch_journal", "llm.batch_journal", c.batch_journal);
    r.get_distinct(node, "batch_roles", "llm.batch_roles", c.batch_roles);
    for (const auto& role : c.batch_roles)
      if (!sample_role_from_string(role))
        r.fail("llm.batch_roles", "'" + role + "' is not a sample role (code, plan, score, "
                                  "repair, menu)");
    r.get_distinct(node, "online_methods", "llm.online_methods", c.online_methods);
    if ((node["batch_roles"] || node["online_methods"]) && c.mode != "batch")
      r.fail(node["batch_roles"] ? "llm.batch_roles" : "llm.online_methods",
             "only means something with llm.mode: batch");
    r.get(node, "prices", "llm.prices", c.prices);
    if (const YAML::Node syn = node["synthetic"]) {
      r.check_keys(syn, "llm.synthetic", {"uncovered"});
      r.get(syn, "uncovered", "llm.synthetic.uncovered", c.synthetic_uncovered);
      if (c.synthetic_uncovered != "refuse" && c.synthetic_uncovered != "no_code")
        r.fail("llm.synthetic.uncovered",
               "'" + c.synthetic_uncovered + "' is neither refuse nor no_code");
      if (c.provider != "synthetic")
        r.fail("llm.synthetic", "applies only to provider synthetic, not '" + c.provider + "'");
    }
  }
  const bool offline =
      c.provider == "replay" || c.provider == "hand_tuned" || c.provider == "synthetic";
  if (!offline && !c.remote())
    r.fail("llm.provider", "'" + c.provider +
                               "' is not implemented (available: replay, hand_tuned, synthetic, "
                               "openai, gemini)");
  if (c.corpus.empty()) r.fail("llm.corpus", "must name a directory");
  if (c.mode == "batch" && !c.remote())
    r.fail("llm.mode", "batch needs provider openai or gemini, not '" + c.provider + "'");
  if (c.remote()) {
    if (c.model.empty()) r.fail("llm.model", "is required for provider " + c.provider);
    if (!node || !node["api_key_env"])
      c.api_key_env = c.provider == "openai" ? "OPENAI_API_KEY" : "GEMINI_API_KEY";
    if (c.max_tokens_field != "max_completion_tokens" && c.max_tokens_field != "max_tokens")
      r.fail("llm.max_tokens_field",
             "'" + c.max_tokens_field + "' is neither max_completion_tokens nor max_tokens");
    if (!c.base_url.empty() && c.base_url.rfind("http://", 0) != 0 &&
        c.base_url.rfind("https://", 0) != 0)
      r.fail("llm.base_url", "'" + c.base_url + "' must start with http:// or https://");
  }
  return c;
}

void check_llm_files(const ConfigReader& r, const LlmConfig& c, const std::filesystem::path& home,
                     const std::vector<std::string>& workloads) {
  if (c.provider == "hand_tuned") {
    const WorkloadCatalog& catalog = workload_catalog();
    for (const auto& w : workloads) {
      const WorkloadEntry* entry = catalog.find(w);
      if (!entry || !entry->hand_tuned) {
        std::string have;
        for (const auto& id : catalog.hand_tuned_ids()) have += (have.empty() ? "" : ", ") + id;
        r.fail("workloads", "'" + w + "' has no hand-tuned reference (workloads/catalog.json has "
                                "references for: " + have + ")");
      }
      auto ref = home / *entry->hand_tuned;
      if (!std::filesystem::is_regular_file(ref))
        r.fail("workloads", "'" + w + "': its hand-tuned reference " + ref.string() + " is missing");
    }
    return;
  }
  if (c.provider == "synthetic") {
    // no_code: the user asked for uncovered workloads to be answered without code (and judged
    // no_code), so a run over every workload completes offline.
    if (c.synthetic_uncovered == "no_code") return;
    const auto dir = home / "llm" / "synthetic";
    const auto covered = synthetic_workloads(dir);
    for (const auto& w : workloads) {
      if (std::find(covered.begin(), covered.end(), w) == covered.end()) {
        std::string list;
        for (const auto& c : covered) list += (list.empty() ? "" : ", ") + c;
        r.fail("workloads", "the synthetic model has no kernel family for '" + w +
                                "' (it covers: " + list + "; see " + dir.string() +
                                "; llm.synthetic.uncovered: no_code answers the others "
                                "without code)");
      }
    }
    return;
  }
  if (c.provider != "replay") return;
  auto dir = home / c.corpus;
  if (!std::filesystem::is_directory(dir))
    r.fail("llm.corpus", "no corpus directory " + dir.string());
  for (const auto& w : workloads) {
    if (!std::filesystem::is_directory(dir / w))
      r.fail("llm.corpus", "the corpus " + dir.string() + " has no responses for workload '" + w +
                               "' (expected the directory " + (dir / w).string() + ")");
  }
}

}  // namespace palladium
