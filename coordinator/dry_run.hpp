// `palladium run --dry-run`: what a config would spend, found by running its
// searches offline, before anything is paid for.
//
// Every search of the config is driven by the same strategy a real run builds
// (search/method_config.hpp), with the same briefs, context blocks, menus,
// seeds and budgets, but:
//   - the LLM is the offline synthetic model (llm/synthetic_model.hpp),
//     whatever llm.provider says, so no API is called and no key is read;
//   - no kernel is evaluated. A candidate without code is observed as no_code
//     (extraction is real and instant); every other candidate is observed as a
//     runtime_error whose error text says it was not evaluated. So the
//     strategies follow the path of a search that never finds a correct
//     kernel: the whole budget is spent (no early stop), which makes the sample
//     and call counts the most the config can issue;
//   - nothing is stored and no agent is started.
// Prompt tokens are the estimate (llm/token_estimate.hpp, bytes / 4) of the
// real prompts the strategies build; completion tokens are that estimate of the
// synthetic model's answers, a stand-in for the real model's, short for a
// workload the model has no kernel family for (then `model_covers` is false).
// No verdict, time or speedup of a dry run is printed or kept: it has none.
//
// Threading: plain functions; the Provider is used from the calling thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/workload_search_actor.hpp"
#include "config/run_config.hpp"
#include "llm/price_table.hpp"
#include "llm/provider.hpp"
#include "protocol/taxonomy.hpp"
#include "search/strategy.hpp"

namespace palladium {

struct DryRunSearch {
  std::string workload;
  uint64_t seed = 0;
  std::string method;
  bool model_covers = true;  // the synthetic model has a kernel family for it
  int budget_spent = 0;      // budget units (budget.counts)
  std::map<SampleRole, int> samples;  // LLM calls by role
  Usage usage;                        // estimated; usage.estimated is true
  // Rounds of requests that each wait on the previous round's answers: the chain of calls
  // that cannot overlap (an iterative search's whole budget; a beam's stages).
  int rounds = 0;

  int calls() const;
};

// Drives `strategy` to its end, answering every request with `model` and
// observing candidates as described above. Throws what the strategy or the
// model throws (std::logic_error for a strategy bug, ProviderError for broken
// synthetic family files); a strategy that is idle (an open budget with
// nothing granted) ends the search rather than looping.
DryRunSearch dry_run_search(Strategy& strategy, const std::string& workload, uint64_t seed,
                            Provider& model, bool model_covers);

// The table a dry run prints: one row per search, the totals, and the dollar
// estimate at `price` (standard and, if the entry has them, batch prices)
// when `price` is set, else a line saying why there is none
// (`price_note`). With `max_output_tokens` it adds the ceiling: every call
// answering that many tokens. `model_label` names what the real run would call.
std::string dry_run_text(const std::vector<DryRunSearch>& searches, const std::string& model_label,
                         const std::optional<Price>& price, const std::string& price_note,
                         std::optional<int> max_output_tokens = std::nullopt);

// The whole dry run of `config`: every search of `searches` (search_specs())
// driven by dry_run_search() on the synthetic model under `home`/llm/synthetic,
// priced with `home`/<llm.prices> for a remote provider. Returns
// dry_run_text(). Throws std::invalid_argument (a strategy that cannot be
// built), ProviderError or PriceTableError, each naming what is wrong.
std::string dry_run_config(const RunConfig& config, const std::vector<WorkloadSearchSpec>& searches,
                           const std::filesystem::path& home);

}  // namespace palladium
