#include "actors/record_conversions.hpp"

namespace palladium {

LlmCallRecord llm_call_record(int64_t run_id, const std::string& provider,
                              const ChatRequest& request, const ChatResponse& response) {
  LlmCallRecord c;
  c.run_id = run_id;
  c.provider = provider;
  c.model = response.model;
  c.role = request.role;
  c.prompt_tokens = response.prompt_tokens;
  c.completion_tokens = response.completion_tokens;
  c.tokens_estimated = response.tokens_estimated;
  c.latency_ms = response.latency_ms;
  return c;
}

LlmResponseRecord llm_response_record(const std::string& provider, const ChatRequest& request,
                                      const ChatResponse& response,
                                      const std::string& params_json) {
  LlmResponseRecord r;
  r.provider = provider;
  r.model = response.model;
  r.params_json = params_json;
  r.sample_index = request.sample_index;
  r.seed = static_cast<int64_t>(request.seed);
  r.prompt_system = request.system_prompt;
  r.prompt_user = request.user_prompt;
  r.text = response.text;
  r.model_reported = response.model;
  r.prompt_tokens = response.prompt_tokens;
  r.completion_tokens = response.completion_tokens;
  r.tokens_estimated = response.tokens_estimated;
  r.latency_ms = response.latency_ms;
  return r;
}

}  // namespace palladium
