// Prompt text for the iterative methods (with and without context).
//
// Pure string assembly, deterministic: the same inputs give the same bytes,
// so a resumed run rebuilds exactly the prompts it stored. The system prompt
// states the task and the answer format; the user prompt carries the XLA
// baseline module and the feedback from the previous candidate.

#ifndef PALLADIUM_SEARCH_PROMPT_TEXT_HPP_
#define PALLADIUM_SEARCH_PROMPT_TEXT_HPP_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "search/eval_outcome.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

// The previous candidate, as the LLM will be told about it.
struct Feedback {
  int sample_index = 0;
  std::string code;  // extracted code; "" when the response had none
  EvalOutcome outcome;
  bool truncated = false;  // the answer was cut off at the output token limit
};

// Caps on what feedback quotes back to the model. Python tracebacks put the
// cause last, so error text keeps mostly its tail; code keeps mostly its head.
inline constexpr size_t kMaxFeedbackErrorChars = 3000;
inline constexpr size_t kMaxFeedbackCodeChars = 12000;

// Asks for one Python module defining `workload(*inputs)` with the
// baseline's signature and outputs, written with jax.experimental.pallas for
// TPU v6e, answered in a single ```python block. With `context` non-empty the
// context blocks are appended (iterative + context method).
std::string iterative_system_prompt(std::string_view context = {});

// The baseline module source and, when `feedback` is present, the previous
// candidate's code, verdict, stage, error (truncated) and, if correct, its
// speedup and timing kind.
std::string iterative_user_prompt(const WorkloadBrief& brief,
                                  const std::optional<Feedback>& feedback);

// "1.234" for a speedup, as every prompt prints it.
std::string format_speedup(double speedup);

// `text` unchanged if it has at most `max_chars` bytes; otherwise its first
// `head` bytes and last max_chars - head bytes around a line saying how many
// bytes were cut. Requires head <= max_chars.
std::string truncate_middle(std::string_view text, size_t max_chars,
                            size_t head);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_PROMPT_TEXT_HPP_
