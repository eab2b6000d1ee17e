#include "search/prompt_text.hpp"

#include <cstdio>
#include <stdexcept>

namespace palladium {

namespace {

constexpr std::string_view kSystemPrompt =
    "You are an expert in writing high-performance Pallas kernels for Google "
    "TPU v6e (Trillium).\n"
    "\n"
    "Task: rewrite the given JAX workload as a Pallas TPU kernel. Write one "
    "self-contained Python module that defines `workload(*inputs)` with "
    "exactly the same signature, output shapes and dtypes as the baseline's "
    "`workload`. The computation must run inside `pl.pallas_call` (import "
    "`jax.experimental.pallas as pl` and `jax.experimental.pallas.tpu as "
    "pltpu`); plain-JAX glue around the kernel is allowed. Inputs are "
    "bfloat16; results must match the XLA baseline within its tolerance. "
    "Choose block shapes whose last two dimensions are multiples of (8, 128) "
    "and that fit in VMEM.\n"
    "\n"
    "Answer with the complete module in a single ```python fenced block. Do "
    "not import the baseline module and do not define test code.\n";

// Keeps 1/4 of the budget for the head of an error (the exception type and
// the first frames) and the rest for the tail (where Python puts the cause).
std::string truncate_error(std::string_view error) {
  return truncate_middle(error, kMaxFeedbackErrorChars,
                         kMaxFeedbackErrorChars / 4);
}

std::string truncate_code(std::string_view code) {
  return truncate_middle(code, kMaxFeedbackCodeChars,
                         kMaxFeedbackCodeChars * 3 / 4);
}

void append_feedback(std::string& out, const Feedback& fb) {
  const EvalOutcome& o = fb.outcome;
  out += "\n## Feedback on your previous attempt (sample ";
  out += std::to_string(fb.sample_index);
  out += ")\n\n";
  if (fb.truncated) {
    out +=
        "Your previous answer was cut off: it reached the output token limit before it "
        "ended, so its code may be incomplete. Answer more briefly: spend fewer words "
        "before the code, and give only the module.\n\n";
  }
  if (fb.code.empty()) {
    out +=
        "Your previous response contained no ```python code block, so "
        "nothing could be evaluated.\n";
  } else {
    out += "Your previous module:\n\n```python\n";
    out += truncate_code(fb.code);
    if (out.back() != '\n') out += '\n';
    out += "```\n\n";
  }
  out += "Verdict: ";
  out += to_string(o.verdict);
  if (!o.stage.empty()) {
    out += " (stage: ";
    out += o.stage;
    out += ")";
  }
  out += "\n";
  if (o.verdict == Verdict::correct) {
    if (auto s = o.speedup()) {
      out += "It is correct. Speedup over the XLA baseline: ";
      out += format_speedup(*s);
      out += "x";
      if (!o.timing_kind.empty()) {
        out += " (timing: ";
        out += o.timing_kind;
        out += ")";
      }
      out += ".\n";
    } else {
      out += "It is correct; no timing is available.\n";
    }
    out +=
        "Write a faster kernel that stays correct (better tiling, fusion, "
        "fewer HBM round trips).\n";
    return;
  }
  if (!o.error.empty()) {
    out += "\nError:\n```\n";
    out += truncate_error(o.error);
    if (out.back() != '\n') out += '\n';
    out += "```\n";
  }
  out += "\nFix the problem and return the complete corrected module.\n";
}

}  // namespace

std::string format_speedup(double speedup) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", speedup);
  return buf;
}

std::string truncate_middle(std::string_view text, size_t max_chars,
                            size_t head) {
  if (head > max_chars) {
    throw std::invalid_argument("truncate_middle: head exceeds max_chars");
  }
  if (text.size() <= max_chars) return std::string(text);
  const size_t tail = max_chars - head;
  const size_t cut = text.size() - head - tail;
  std::string out(text.substr(0, head));
  out += "\n... [";
  out += std::to_string(cut);
  out += " characters omitted] ...\n";
  out += text.substr(text.size() - tail);
  return out;
}

std::string iterative_system_prompt(std::string_view context) {
  std::string out(kSystemPrompt);
  if (!context.empty()) {
    out += "\n";
    out += context;
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

std::string iterative_user_prompt(const WorkloadBrief& brief,
                                  const std::optional<Feedback>& feedback) {
  std::string out = "## Workload ";
  out += brief.id;
  if (!brief.name.empty()) {
    out += ": ";
    out += brief.name;
  }
  out += "\n\nBaseline module (plain JAX, compiled by XLA):\n\n```python\n";
  out += brief.baseline_source;
  if (out.back() != '\n') out += '\n';
  out += "```\n";
  if (feedback) {
    append_feedback(out, *feedback);
  } else {
    out += "\nWrite the Pallas TPU version of this workload.\n";
  }
  return out;
}

}  // namespace palladium
