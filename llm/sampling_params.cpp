#include "llm/sampling_params.hpp"

#include <nlohmann/json.hpp>

namespace palladium {

std::string SamplingParams::canonical() const {
  // nlohmann::json objects keep their keys sorted, which makes the text canonical.
  nlohmann::json j = nlohmann::json::object();
  if (temperature) j["temperature"] = *temperature;
  if (top_p) j["top_p"] = *top_p;
  j["max_output_tokens"] = max_output_tokens;
  if (thinking_budget) j["thinking_budget"] = *thinking_budget;
  if (!thinking_level.empty()) j["thinking_level"] = thinking_level;
  if (!reasoning_effort.empty()) j["reasoning_effort"] = reasoning_effort;
  return j.dump();
}

}  // namespace palladium
