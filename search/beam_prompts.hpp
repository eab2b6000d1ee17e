// Prompt text for the Autocomp two-phase beam search, one function per
// sample role. Pure, deterministic string assembly: the same inputs give the
// same bytes, which the resume identity relies on.
//
// Conventions every prompt keeps (docs/prompts.md documents each format
// precisely, for the synthetic model and for anyone parsing stored prompts):
//   - the context blocks (brief.context), when the method uses them, appear
//     verbatim at the end of the system prompt;
//   - every piece of code is in a ```python fenced block in the user prompt,
//     under a "## " heading naming what it is; the code a sample works on is
//     the last such block;
//   - a plan being implemented is quoted between <plan> and </plan>;
//   - menus are listed between <strategies> and </strategies>, one per line
//     as "N. strategy";
//   - a score prompt asks for a line "SCORE: <n>" with n in 0..10;
//   - a menu prompt asks for new strategies one per line as "- strategy"
//     between <strategies> tags.

#ifndef PALLADIUM_SEARCH_BEAM_PROMPTS_HPP_
#define PALLADIUM_SEARCH_BEAM_PROMPTS_HPP_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/taxonomy.hpp"
#include "search/eval_outcome.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

// The kernel a prompt is about.
struct PromptKernel {
  std::string code;  // the module source; the baseline module for the root
  bool is_root = false;
  // Its speedup over XLA and timing kind, when known (correct and timed).
  std::optional<double> speedup;
  std::string timing_kind;
};

// Autocomp's three planning instructions (built_agent.py L706-712), drawn
// 0.8 / 0.1 / 0.1 per optimisation plan prompt.
enum class PlanInstruction { apply_one, invent_inspired, think_different };

// The system prompt for a sample of `role`; `context` ("" for none) is
// appended verbatim.
std::string beam_system_prompt(SampleRole role, std::string_view context);

// A plan in the translation phase: apply exactly one translation strategy.
std::string translate_plan_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                                  const std::vector<std::string>& strategies, int round);

// A plan in the optimisation phase, from the menu that survived dropout.
std::string optimise_plan_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                                 const std::vector<std::string>& strategies,
                                 PlanInstruction instruction, int round);

// Implement `plan` on `parent`.
std::string implement_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                             std::string_view plan, Phase phase);

// Fix `failed`, which got `outcome`; each error line is cut to 400 characters
// as Autocomp does, and the whole error to kMaxFeedbackErrorChars.
std::string repair_prompt(const WorkloadBrief& brief, std::string_view failed_code,
                          const EvalOutcome& outcome, std::string_view plan);

// Rate how completely `candidate` translates the baseline into Pallas.
std::string score_prompt(const WorkloadBrief& brief, std::string_view candidate_code);

// Ask for about `n_new` new optimisation strategies for `parent`, not already
// in `current`.
std::string menu_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                        const std::vector<std::string>& current, int n_new);

// Autocomp's last menu item, added after the one-shot strategies.
inline constexpr std::string_view kOtherMethods = "Other methods not listed here.";

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_BEAM_PROMPTS_HPP_
