// How a model is asked to sample: the llm.* sampling keys of a run config.
//
// They are part of the response cache key (through canonical()), so a run that changes the
// temperature or the thinking budget never reuses an answer drawn under other settings.
// Unset optionals are left to the API's default and are omitted from the request.

#ifndef PALLADIUM_LLM_SAMPLING_PARAMS_HPP_
#define PALLADIUM_LLM_SAMPLING_PARAMS_HPP_

#include <optional>
#include <string>

namespace palladium {

struct SamplingParams {
  std::optional<double> temperature;
  std::optional<double> top_p;
  // The answer's token limit, thinking included (OpenAI max_completion_tokens / max_tokens,
  // Gemini generationConfig.maxOutputTokens). Also the worst case the dollar cap reserves.
  int max_output_tokens = 8192;
  // Gemini generationConfig.thinkingConfig: thinkingBudget (tokens; 0 = off, -1 = dynamic)
  // for Gemini 2.5, thinkingLevel ("low", "high", ...) for Gemini 3.
  std::optional<int> thinking_budget;
  std::string thinking_level;
  // OpenAI reasoning models: "minimal", "low", "medium", "high".
  std::string reasoning_effort;

  // A stable text of every field that changes what the model may answer, e.g.
  // {"max_output_tokens":8192,"temperature":1.0}: sorted keys, unset fields omitted.
  std::string canonical() const;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_SAMPLING_PARAMS_HPP_
