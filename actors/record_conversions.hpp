// The store's records of an LLM call and of a cached response, from the chat request and
// response they record.
#pragma once

#include <cstdint>
#include <string>

#include "llm/provider.hpp"
#include "store/run_store.hpp"

namespace palladium {

// The paid call behind `response`, answering `request` for run `run_id`.
LlmCallRecord llm_call_record(int64_t run_id, const std::string& provider,
                              const ChatRequest& request, const ChatResponse& response);

// `response` as an entry of the LLM response cache, keyed by `request`'s
// prompt, sample index and seed, with `params_json` the canonical sampling
// parameters ("{}" when the provider takes none).
LlmResponseRecord llm_response_record(const std::string& provider, const ChatRequest& request,
                                      const ChatResponse& response,
                                      const std::string& params_json = "{}");

}  // namespace palladium
