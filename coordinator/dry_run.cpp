#include "coordinator/dry_run.hpp"

#include <cstdio>
#include <limits>
#include <sstream>

#include <algorithm>

#include "llm/code_extractor.hpp"
#include "llm/synthetic_family.hpp"
#include "llm/synthetic_provider.hpp"
#include "search/budget.hpp"
#include "search/method_config.hpp"

namespace palladium {
namespace {

// The outcome a dry run observes: extraction is real, evaluation is not done.
EvalOutcome unevaluated(const std::string& code) {
  EvalOutcome o;
  if (code.empty()) {
    o.verdict = Verdict::no_code;
    o.stage = "extract";
    o.error = "the response had no extractable code";
    return o;
  }
  o.verdict = Verdict::runtime_error;
  o.stage = "dry_run";
  o.error = "not evaluated: this is `palladium run --dry-run`, which runs no kernel";
  return o;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pad(const std::string& s, size_t width, bool right = true) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

int DryRunSearch::calls() const {
  int n = 0;
  for (const auto& [role, count] : samples) n += count;
  return n;
}

DryRunSearch dry_run_search(Strategy& strategy, const std::string& workload, uint64_t seed,
                            Provider& model, bool model_covers) {
  DryRunSearch out;
  out.workload = workload;
  out.seed = seed;
  out.method = strategy.method();
  out.model_covers = model_covers;
  out.usage.estimated = true;
  while (!strategy.done()) {
    // Every ready request at once: strategies give the same requests whatever
    // the order their answers arrive in (search/strategy.hpp), so this counts
    // what a pipelined run would.
    auto requests = strategy.propose(std::numeric_limits<int>::max());
    if (requests.empty()) break;  // idle: an open budget nobody will grant
    ++out.rounds;
    for (const auto& r : requests) {
      ChatRequest c;
      c.workload_id = workload;
      c.role = r.role;
      c.sample_index = r.sample_index;
      c.seed = seed;
      c.system_prompt = r.system_prompt;
      c.user_prompt = r.user_prompt;
      c.method = out.method;
      ChatResponse answer = model.complete(c);
      ++out.samples[r.role];
      out.usage.prompt_tokens += answer.prompt_tokens;
      out.usage.completion_tokens += answer.completion_tokens;
      out.usage.thinking_tokens += answer.thinking_tokens;
      Observation o;
      o.text = answer.text;
      if (is_candidate_role(r.role)) {
        o.code = extract_code(answer.text);
        o.outcome = unevaluated(o.code);
      }
      strategy.observe(r.sample_index, o);
    }
  }
  out.budget_spent = strategy.budget().spent();
  return out;
}

std::string dry_run_text(const std::vector<DryRunSearch>& searches, const std::string& model_label,
                         const std::optional<Price>& price, const std::string& price_note,
                         std::optional<int> max_output_tokens) {
  std::ostringstream s;
  s << "DRY RUN: answers from the offline synthetic model (standing in for " << model_label
    << "); no kernel evaluated, nothing stored, no API called.\n"
    << "Tokens are estimates (bytes / 4): prompts are the real prompts; completions are the "
       "synthetic model's answers.\n\n";
  std::vector<SampleRole> roles = all_sample_roles();
  s << pad("workload", 10, false) << pad("seed", 6) << pad("method", 19) << pad("budget", 8);
  for (auto role : roles) s << pad(std::string(to_string(role)), 8);
  s << pad("calls", 7) << pad("prompt_tok", 12) << pad("answer_tok", 12) << "\n";
  DryRunSearch total;
  bool uncovered = false;
  for (const auto& d : searches) {
    s << pad(d.workload + (d.model_covers ? "" : "*"), 10, false) << pad(std::to_string(d.seed), 6)
      << pad(d.method, 19) << pad(std::to_string(d.budget_spent), 8);
    for (auto role : roles) {
      auto it = d.samples.find(role);
      int n = it == d.samples.end() ? 0 : it->second;
      s << pad(std::to_string(n), 8);
      total.samples[role] += n;
    }
    s << pad(std::to_string(d.calls()), 7) << pad(std::to_string(d.usage.prompt_tokens), 12)
      << pad(std::to_string(d.usage.output_tokens()), 12) << "\n";
    total.budget_spent += d.budget_spent;
    total.usage += d.usage;
    uncovered = uncovered || !d.model_covers;
  }
  s << pad("total", 10, false) << pad("", 6) << pad("", 19)
    << pad(std::to_string(total.budget_spent), 8);
  for (auto role : roles) s << pad(std::to_string(total.samples[role]), 8);
  s << pad(std::to_string(total.calls()), 7) << pad(std::to_string(total.usage.prompt_tokens), 12)
    << pad(std::to_string(total.usage.output_tokens()), 12) << "\n";
  if (uncovered) {
    s << "* the synthetic model has no kernel family for this workload: its answers carry no "
         "code, so answer_tok is far below what a real model writes.\n";
  }
  s << "\n";
  if (price) {
    s << "Estimated cost at " << model_label << " prices ($" << fixed(price->input_per_mtok, 2)
      << " in / $" << fixed(price->output_per_mtok, 2) << " out per Mtok, as of " << price->as_of
      << "): $" << fixed(cost_usd(*price, total.usage), 4);
    if (price->batch_input_per_mtok || price->batch_output_per_mtok)
      s << " (batch interface: $" << fixed(cost_usd(*price, total.usage, true), 4) << ")";
    s << "\n";
    if (max_output_tokens) {
      // What no answer can exceed: every call writing llm.max_output_tokens
      // (thinking included), on the same prompts.
      Usage most = total.usage;
      most.completion_tokens = static_cast<int64_t>(total.calls()) * *max_output_tokens;
      most.thinking_tokens = 0;
      s << "At most $" << fixed(cost_usd(*price, most), 4) << " if every one of the "
        << total.calls() << " calls wrote llm.max_output_tokens (" << *max_output_tokens
        << ", thinking included).\n";
    }
    s << "Thinking tokens are not modelled in the estimate: a thinking model bills them as "
         "output too.\n";
  } else {
    s << "No dollar estimate: " << price_note << "\n";
  }
  return s.str();
}

std::string dry_run_config(const RunConfig& config, const std::vector<WorkloadSearchSpec>& searches,
                           const std::filesystem::path& home) {
  const auto synthetic_dir = home / "llm" / "synthetic";
  const auto covered = synthetic_workloads(synthetic_dir);
  auto model = make_synthetic_provider(synthetic_dir);
  std::vector<DryRunSearch> results;
  for (const auto& spec : searches) {
    // The search's own limit even under global reallocation: a dry run has no
    // run to grant more, and it asks for the most each search can spend.
    auto strategy = make_strategy(spec.method, spec.brief, Budget(spec.budget, spec.method.counts),
                                  spec.menus, spec.seed);
    const bool covers = std::find(covered.begin(), covered.end(), spec.brief.id) != covered.end();
    results.push_back(dry_run_search(*strategy, spec.brief.id, spec.seed, *model, covers));
  }
  std::string label = "llm.provider " + config.llm.provider;
  std::optional<Price> price;
  std::string note = label + " is offline: it costs nothing";
  std::optional<int> ceiling;
  if (config.llm.remote()) {
    label = config.llm.provider + " " + config.llm.model;
    const auto table_path = home / config.llm.prices;
    price = PriceTable::load(table_path.string()).find(config.llm.provider, config.llm.model);
    note = table_path.string() + " has no price for " + label;
    ceiling = config.llm.sampling.max_output_tokens;
  }
  return dry_run_text(results, label, price, note, ceiling);
}

}  // namespace palladium
