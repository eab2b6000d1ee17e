// OpenAI-compatible chat completions (POST {base_url}/chat/completions).
//
// Request: {"model", "messages": [system?, user], "n" (when > 1), "temperature", "top_p",
// "max_completion_tokens" | "max_tokens", "reasoning_effort"}, with "Authorization: Bearer
// KEY" when a key is configured. base_url defaults to https://api.openai.com/v1 and must
// include the version path for other servers (e.g. http://127.0.0.1:8000/v1).
//
// Response: choices[i].message.content (null counts as ""), choices[i].finish_reason
// ("length" = truncated), usage.prompt_tokens / completion_tokens /
// completion_tokens_details.reasoning_tokens. OpenAI counts reasoning tokens inside
// completion_tokens; Usage keeps them apart (completion = visible only). A server that sends
// no usage gets chars/4 estimates, marked estimated. Thinking that a server returns beside
// the content (message.reasoning_content) is not part of the text.
//
// Default max_samples_per_call: 8.

#ifndef PALLADIUM_LLM_OPENAI_PROVIDER_HPP_
#define PALLADIUM_LLM_OPENAI_PROVIDER_HPP_

#include <memory>

#include "llm/http_provider.hpp"

namespace palladium {

std::unique_ptr<HttpProvider> make_openai_provider(HttpProviderConfig config);

}  // namespace palladium

#endif  // PALLADIUM_LLM_OPENAI_PROVIDER_HPP_
