// What a run's LLM answers cost and who paid for them, for the run report and the sweep
// report's cells (issue 22):
//   - the prompt cache: the share of prompt tokens the provider served from its cache and the
//     dollars that saved (llm_calls.cached_prompt_tokens, cache_saved_usd);
//   - paid vs reused: answers this run's own calls fetched, and answers it reused from the
//     response cache, charged to the run whose call first paid for them
//     (RunStore::llm_attribution), so "alone" (paid + reused) is what the run would have cost
//     by itself, whatever order a sweep's cells ran in;
//   - cut-off answers (finish reason length / MAX_TOKENS) per workload.
//
// JSON ("llm" of the run report):
//   {"calls", "batch_calls", "api_calls", "prompt_tokens", "cached_prompt_tokens",
//    "cache_hit_share": x | null, "cache_saved_usd": x | null, "output_tokens",
//    "cost_usd", "cost_complete",
//    "paid": {"answers", "prompt_tokens", "output_tokens", "usd"},
//    "reused": {"answers", "prompt_tokens", "output_tokens", "usd"},
//    "alone_usd", "truncated", "truncated_by_workload": {workload: count}}
// cache_hit_share is over the run's own calls' prompt tokens (null with none);
// cache_saved_usd is null when no call had a price.

#ifndef PALLADIUM_STORE_LLM_USAGE_REPORT_HPP_
#define PALLADIUM_STORE_LLM_USAGE_REPORT_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "store/run_store.hpp"

namespace palladium {

struct LlmUsageSummary {
  // The run's own calls (llm_calls rows).
  int64_t calls = 0;
  int64_t batch_calls = 0;  // of calls, those answered through a provider batch job
  int64_t api_calls = 0;    // of calls, those to a provider (not synthetic/replay/hand_tuned)
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t output_tokens = 0;  // completion + thinking
  double cost_usd = 0;
  bool cost_complete = true;  // every API call had a price
  std::optional<double> cache_saved_usd;
  // The run's live answers, by who paid.
  int64_t paid_answers = 0, reused_answers = 0;
  int64_t paid_prompt_tokens = 0, paid_output_tokens = 0;
  int64_t reused_prompt_tokens = 0, reused_output_tokens = 0;
  double paid_usd = 0, reused_usd = 0;
  int64_t truncated = 0;
  std::map<std::string, int64_t> truncated_by_workload;  // only workloads with some

  std::optional<double> cache_hit_share() const;
  double alone_usd() const { return paid_usd + reused_usd; }
};

// Throws StoreError as the store does (a run that does not exist gives an empty summary).
LlmUsageSummary summarize_llm_usage(const RunStore& store, int64_t run_id);

nlohmann::json llm_usage_json(const LlmUsageSummary& u);

// Indented lines for the run report's text ("" when the run used no provider and reused no
// paid answer and had no cut-off answer: an offline run's report stays as short as before).
std::string llm_usage_text(const LlmUsageSummary& u);

}  // namespace palladium

#endif  // PALLADIUM_STORE_LLM_USAGE_REPORT_HPP_
