// What `palladium plan CONFIG|SWEEP` prints: before anything is spent, how many calls and
// tokens a run config (or every cell of a sweep) will make, what they cost online and in batch
// mode, how long the run will take under the account's limits and the TPU chips, which limit
// binds, and what would relax it.
//
// The counts are the dry run's (coordinator/dry_run.hpp: every search driven to the end of its
// budget by the offline synthetic model, no verdict ever correct, so the most the config can
// issue);
// the time model is llm/throughput_plan.hpp. The assumptions are flags with defaults:
//   --latency-s 40      seconds per LLM call (Gemini 3 Flash at ~4k in / 8-9k out: 37-41 s)
//   --eval-s 10         seconds of one chip per candidate evaluation
//   --cached-share F    share of input tokens the provider's prompt cache serves (default:
//                       estimated from the dry run's prompts, llm/prefix_cache_estimate.hpp)
//   --output-tokens N   output tokens per call (default: the dry run's, but at least half of
//                       llm.max_output_tokens: the synthetic model's answers are short)
//   --startup-s 20      seconds until the evaluation workers take their first candidate
//   --chips 1           TPU chips evaluating in parallel
//   --tier-limits rpm=1000,tpm=1000000,usd_per_window=10,window_s=600,concurrency=64
//                       the account's limits (any subset; the config's llm.* limits are the
//                       defaults; "gemini-tier1" and "gemini-tier2" name the public tables)
// A run's report later gives the measured latency, tokens and evaluation time.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "llm/throughput_plan.hpp"

namespace palladium {

struct PlanRequest {
  std::string path;   // a run config, or a sweep (a file with a grid)
  std::string tiers;  // --tier-limits
  PlanAssumptions assumptions;
  int chips = 1;
  std::optional<double> output_per_call, cached_share;  // unset: from the dry run
};

// Why there is no plan, and the exit status it means (2: bad input, 1: a dry run failed).
class PlanError : public std::runtime_error {
 public:
  PlanError(int exit_code, const std::string& what)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// A flag's number: all of `text`, and >= 0.
bool parse_plan_number(const std::string& text, double& out);

// Applies "key=value,..." (or a named tier) to `l`; "" on success, else what was wrong.
std::string apply_tier_limits(const std::string& spec, PlanLimits& l);

// The plan, as `palladium plan` prints it. Throws PlanError.
std::string spend_plan_text(const PlanRequest& request, const std::filesystem::path& home);

}  // namespace palladium
