// How long an LLM-driven search will take and what it will cost, before anything is spent:
// the model behind `palladium plan`.
//
// The demand (calls, tokens, candidates, the longest chain of calls that wait on each other)
// comes from a dry run's counts; the assumptions (latency per call, evaluation time per
// candidate, cache hit share) are inputs with documented defaults. Each limit gives the time
// the whole demand needs under that limit alone, as the gateway enforces it
// (llm/call_scheduler.hpp), plus what cannot overlap with it (L = latency, E = eval_s, N = calls):
//   concurrency   N * L / max_concurrent + E          (the last answer is still evaluated)
//   requests/min  the token bucket: burst b = max(1, rpm/60) at once, then (rpm - b)/60 per
//                 second: (N - b) / ((rpm - b) / 60) + L + E
//   tokens/min    the same bucket over the calls' tokens (input + output)
//   spend rate    a call holds its worst case w (its prompt and the full output limit) while
//                 running and its real cost c for one window W after its answer
//                 (llm/spend_window.hpp), and starts only while w more fits under the limit X:
//                 N calls occupy N * (c*W + w*L) dollar-seconds of a usable X - w + c per
//                 second; the first window starts at once: max(0, N*(c*W + w*L)/(X - w + c) - W)
//                 + L + E
//   TPU chips     candidates * E / chips + L          (the first candidate needs an answer)
//   chain         the longest sequential chain * (L + E)  (iterative methods)
// Every limit's time also holds the evaluation workers' start-up S (a judge's JAX import and
// first compile: 18 s on a loaded 2-core host), which delays every chain's first verdict; the
// first calls overlap it, so this errs long by at most S. The predicted wall time is the
// largest; that limit binds, and relaxing it helps until the next largest binds (reported as
// the gain from relaxing it). Pure arithmetic; no clock.

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
  // The output tokens per call the spend governor reserves before an answer: the output
  // limit times the samples per call; 0 = the expected output (no reservation beyond it).
  double reserved_output_per_call = 0;
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
  double startup_s = 20;        // until the evaluation workers take their first candidate
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
