#include "search/beam_prompts.hpp"

#include "search/prompt_text.hpp"

namespace palladium {
namespace {

constexpr size_t kMaxErrorLineChars = 400;  // Autocomp cuts each stderr line here

constexpr std::string_view kPlanSystem =
    "You are an expert in writing high-performance Pallas kernels for Google TPU v6e "
    "(Trillium). You plan one change at a time to a JAX module whose computation should run "
    "in Pallas TPU kernels (`jax.experimental.pallas` as `pl`, `jax.experimental.pallas.tpu` "
    "as `pltpu`); a separate step implements your plan. Answer with the plan in prose and "
    "short snippets; do not write the complete module.\n";

constexpr std::string_view kScoreSystem =
    "You are an expert reviewer of Pallas kernels for Google TPU v6e. You judge how much of a "
    "JAX workload's computation a candidate module moves into Pallas TPU kernels. You answer "
    "with a single score line.\n";

constexpr std::string_view kMenuSystem =
    "You are an expert in performance engineering for Google TPU v6e (Trillium) with Pallas. "
    "You propose optimisation strategies for a given kernel, one per line.\n";

std::string with_context(std::string_view base, std::string_view context) {
  std::string out(base);
  if (!context.empty()) {
    out += "\n";
    out += context;
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

void append_header(std::string& out, const WorkloadBrief& brief) {
  out += "## Workload ";
  out += brief.id;
  if (!brief.name.empty()) {
    out += ": ";
    out += brief.name;
  }
  out += "\n";
}

void append_code(std::string& out, std::string_view heading, std::string_view code,
                 bool truncate) {
  out += "\n## ";
  out += heading;
  out += "\n\n```python\n";
  out += truncate ? truncate_middle(code, kMaxFeedbackCodeChars, kMaxFeedbackCodeChars * 3 / 4)
                  : std::string(code);
  if (out.back() != '\n') out += '\n';
  out += "```\n";
}

void append_kernel(std::string& out, std::string_view heading, const PromptKernel& k) {
  append_code(out, heading, k.code, !k.is_root);
  out += "\n";
  if (k.is_root) {
    out += "This is the XLA baseline module itself (plain JAX): speedup 1.000x.\n";
  } else if (k.speedup) {
    out += "It is correct. Its speedup over the XLA baseline: ";
    out += format_speedup(*k.speedup);
    out += "x";
    if (!k.timing_kind.empty()) {
      out += " (timing: ";
      out += k.timing_kind;
      out += ")";
    }
    out += ".\n";
  } else {
    out += "It is correct; its time was not measured.\n";
  }
}

void append_strategies(std::string& out, const std::vector<std::string>& strategies) {
  out += "<strategies>\n";
  for (size_t i = 0; i < strategies.size(); ++i) {
    out += std::to_string(i + 1);
    out += ". ";
    out += strategies[i];
    out += "\n";
  }
  out += "</strategies>\n";
}

void append_rules(std::string& out, const std::vector<std::string_view>& rules) {
  out += "\nRules:\n";
  for (size_t i = 0; i < rules.size(); ++i) {
    out += std::to_string(i + 1);
    out += ". ";
    out += rules[i];
    out += "\n";
  }
}

constexpr std::string_view kSameContract =
    "Keep the `workload(*inputs)` signature, output shapes and dtypes of the baseline; results "
    "must match it within its tolerance.";
constexpr std::string_view kNoFallback = "Do not add fallback paths.";
constexpr std::string_view kPlanShape =
    " The plan should be specific to this code and explain how to change it. Do not write the "
    "complete module yet.\n";

std::string_view instruction_text(PlanInstruction i) {
  switch (i) {
    case PlanInstruction::invent_inspired:
      return "Invent a new strategy inspired by the strategies above, and come up with a plan "
             "to apply it to make this code faster on TPU v6e.";
    case PlanInstruction::think_different:
      return "Think of a new strategy different from the strategies above, and come up with a "
             "plan to apply it to make this code faster on TPU v6e.";
    case PlanInstruction::apply_one:
      break;
  }
  return "Come up with a plan to apply exactly one of the strategies above to make this code "
         "faster on TPU v6e.";
}

std::string cut_lines(std::string_view text, size_t max_line) {
  std::string out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.size() > max_line) {
      out += line.substr(0, max_line);
      out += " ...";
    } else {
      out += line;
    }
    if (nl == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

std::string beam_system_prompt(SampleRole role, std::string_view context) {
  switch (role) {
    case SampleRole::plan:
      return with_context(kPlanSystem, context);
    case SampleRole::score:
      return with_context(kScoreSystem, context);
    case SampleRole::menu:
      return with_context(kMenuSystem, context);
    case SampleRole::code:
    case SampleRole::repair:
      break;
  }
  return iterative_system_prompt(context);
}

std::string translate_plan_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                                  const std::vector<std::string>& strategies, int round) {
  std::string out;
  append_header(out, brief);
  append_kernel(out, "Code to translate", parent);
  out +=
      "\nIdentify the parts of this code that should be converted into Pallas TPU kernels. "
      "Translation strategies:\n";
  append_strategies(out, strategies);
  out +=
      "\nYou are an expert at translating code to this hardware target. Come up with a plan to "
      "apply exactly one of the strategies above to convert more of this code into Pallas "
      "kernels for TPU v6e.";
  out += kPlanShape;
  append_rules(out, {kSameContract, kNoFallback});
  out += "\nThis is translation round " + std::to_string(round) + ".\n";
  return out;
}

std::string optimise_plan_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                                 const std::vector<std::string>& strategies,
                                 PlanInstruction instruction, int round) {
  std::string out;
  append_header(out, brief);
  append_kernel(out, "Code to optimise", parent);
  out +=
      "\nPlease carefully review the code to identify any inefficiencies, and improve its "
      "performance on TPU v6e with the following strategies:\n";
  append_strategies(out, strategies);
  out += "\n";
  out += instruction_text(instruction);
  out += kPlanShape;
  append_rules(out, {kSameContract});
  out += "\nThis is optimisation round " + std::to_string(round) + ".\n";
  return out;
}

std::string implement_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                             std::string_view plan, Phase phase) {
  std::string out;
  append_header(out, brief);
  append_code(out, "Original code", parent.code, !parent.is_root);
  out +=
      "\nYou are an expert performance engineer. Rewrite the original code based on the "
      "following plan:\n<plan>\n";
  out += plan;
  if (out.back() != '\n') out += '\n';
  out += "</plan>\n";
  std::vector<std::string_view> rules = {
      kSameContract, "The computation must run inside `pl.pallas_call` kernels.",
      "Answer with the complete module in a single ```python fenced block."};
  if (phase == Phase::translate) rules.push_back(kNoFallback);
  append_rules(out, rules);
  return out;
}

std::string repair_prompt(const WorkloadBrief& brief, std::string_view failed_code,
                          const EvalOutcome& outcome, std::string_view plan) {
  std::string out;
  append_header(out, brief);
  append_code(out, "Failed code", failed_code, true);
  out += "\nIts evaluation failed. Verdict: ";
  out += to_string(outcome.verdict);
  if (!outcome.stage.empty()) {
    out += " (stage: ";
    out += outcome.stage;
    out += ")";
  }
  out += ".\n";
  if (!outcome.error.empty()) {
    out += "\nError:\n```\n";
    out += truncate_middle(cut_lines(outcome.error, kMaxErrorLineChars), kMaxFeedbackErrorChars,
                           kMaxFeedbackErrorChars / 4);
    if (out.back() != '\n') out += '\n';
    out += "```\n";
  }
  if (!plan.empty()) {
    out += "\nThe code was written to implement this plan:\n<plan>\n";
    out += plan;
    if (out.back() != '\n') out += '\n';
    out += "</plan>\n";
  }
  out +=
      "\nFix the problem and return the complete corrected module in a single ```python fenced "
      "block.\n";
  return out;
}

std::string score_prompt(const WorkloadBrief& brief, std::string_view candidate_code) {
  std::string out;
  append_header(out, brief);
  append_code(out, "Original code", brief.baseline_source, false);
  append_code(out, "Candidate code", candidate_code, true);
  out +=
      "\nRate how completely the candidate converts the compute-heavy operations of the "
      "original code into Pallas TPU kernels, on a scale from 0 to 10: 0 = all compute is still "
      "in plain jnp / lax operations, 5 = some of it is converted, 10 = every compute-heavy "
      "operation runs inside a Pallas kernel. Judge the translation only, not speed or "
      "correctness (the candidate is known to be correct).\n"
      "Answer with exactly one line of the form:\n"
      "SCORE: <n>\n";
  return out;
}

std::string menu_prompt(const WorkloadBrief& brief, const PromptKernel& parent,
                        const std::vector<std::string>& current, int n_new) {
  std::string out;
  append_header(out, brief);
  append_kernel(out, "Kernel to optimise", parent);
  out += "\nStrategies already on the menu:\n";
  append_strategies(out, current);
  out += "\nIdentify about " + std::to_string(n_new) +
         " new optimisation strategies for this kernel on TPU v6e that are NOT already listed "
         "above. Answer with the new strategies between <strategies> and </strategies>, one per "
         "line, each line starting with \"- \".\n";
  return out;
}

}  // namespace palladium
