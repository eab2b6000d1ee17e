// Gemini generateContent (POST {base_url}/models/{model}:generateContent).
//
// Request: {"systemInstruction": {"parts": [{"text"}]}, "contents": [{"role": "user",
// "parts": [{"text"}]}], "generationConfig": {"candidateCount", "temperature", "topP",
// "maxOutputTokens", "thinkingConfig": {"thinkingBudget" | "thinkingLevel"}}}, with the key in
// the "x-goog-api-key" header (never in the URL, where it would reach logs). base_url
// defaults to https://generativelanguage.googleapis.com/v1beta.
//
// Response: candidates[i].content.parts[].text joined (parts marked "thought" are left out),
// candidates[i].finishReason ("MAX_TOKENS" = truncated), usageMetadata.promptTokenCount /
// candidatesTokenCount / thoughtsTokenCount. A candidate with no content (all tokens spent
// thinking, or a safety stop) is an empty completion with its finishReason; a prompt
// blocked outright (no candidates, promptFeedback.blockReason) gives n empty completions
// with finish_reason "BLOCKED:<reason>": the same prompt would be blocked again, so it is an
// answer, not a retryable failure. Error bodies' RetryInfo.retryDelay is honoured like a
// Retry-After header.
//
// Default max_samples_per_call: 4 (candidateCount; some Gemini models accept only 1: set
// llm.samples_per_call: 1 for them).

#ifndef PALLADIUM_LLM_GEMINI_PROVIDER_HPP_
#define PALLADIUM_LLM_GEMINI_PROVIDER_HPP_

#include <memory>

#include "llm/http_provider.hpp"

namespace palladium {

std::unique_ptr<HttpProvider> make_gemini_provider(HttpProviderConfig config);

}  // namespace palladium

#endif  // PALLADIUM_LLM_GEMINI_PROVIDER_HPP_
