// How long an LLM-driven search will take and what it will cost, before anything is spent:
// the model behind `palladium plan`.
//
// The demand (calls, tokens, candidates, the longest chain of calls that wait on each other)
// comes from a dry run's counts; the assumptions (latency per call, evaluation time per
// candidate, cache hit share) are inputs with documented defaults. Each limit gives the time
// the whole demand needs under that limit alone:
//   concurrency   calls * latency / max_concurrent
//   requests/min  calls / rpm
//   tokens/min    (input + output tokens) / tpm
//   spend rate    dollars / usd_per_window * window
//   TPU chips     candidates * eval_s / chips
//   chain         the longest sequential chain * (latency + eval_s)  (iterative methods)
// The predicted wall time is the largest; that limit binds, and relaxing it helps until the
// next largest binds (reported as the gain from relaxing it). Pure arithmetic; no clock.

#ifndef PALLADIUM_LLM_THROUGHPUT_PLAN_HPP_
#define PALLADIUM_LLM_THROUGHPUT_PLAN_HPP_

#include <optional>
#include <string>
#include <vector>

#include "llm/price_table.hpp"

namespace palladium {

struct PlanDemand {
  double calls = 0;
  double samples = 0;
  double input_tokens = 0;   // prompt tokens of every call, cached ones included
  double output_tokens = 0;  // answers and thinking
  double candidates = 0;     // code and repair samples, each evaluated once
  double longest_chain = 0;  // calls that must run one after another (iterative: its budget)
};

struct PlanLimits {
  int max_concurrent = 8;
  double requests_per_minute = 0;  // 0 = none
  double tokens_per_minute = 0;
  std::optional<double> usd_per_window;
  double window_s = 600;
  int chips = 1;
};

struct PlanAssumptions {
  double latency_s = 40;        // per call (Gemini 3 Flash, ~4k in / 8-9k out: 37-41 s)
  double eval_s = 10;           // per candidate on one chip
  double cached_share = 0;      // of input tokens served from the prompt cache
};

struct PlanLimitTime {
  std::string limit;   // "concurrency", "requests/min", ...
  double seconds = 0;
  std::string relax;   // what would relax it
};

struct PlanEstimate {
  double cached_tokens = 0;
  double usd_online = 0;
  double usd_batch = 0;
  std::vector<PlanLimitTime> limits;  // every limit that applies, slowest first
  double wall_s = 0;                  // the slowest
  std::string binding;                // its name
  double next_s = 0;                  // the runner-up: the wall time once the binding one is lifted
};

PlanEstimate estimate_plan(const PlanDemand& demand, const PlanLimits& limits,
                           const PlanAssumptions& assume, const std::optional<Price>& price);

}  // namespace palladium

#endif  // PALLADIUM_LLM_THROUGHPUT_PLAN_HPP_
