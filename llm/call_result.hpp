// What one provider call answers: n completions of one prompt and the call's usage.
//
// A call may carry several samples of the same request (OpenAI `n`, Gemini `candidateCount`):
// the gateway coalesces identical requests into one call and hands completions[i] to the
// i-th sample it coalesced. An API may answer with fewer completions than asked; the gateway
// asks again for the rest.

#ifndef PALLADIUM_LLM_CALL_RESULT_HPP_
#define PALLADIUM_LLM_CALL_RESULT_HPP_

#include <string>
#include <vector>

#include "llm/provider.hpp"

namespace palladium {

struct Completion {
  std::string text;
  std::string finish_reason;  // the API's own spelling; "" for offline providers
  bool truncated = false;     // hit the output token limit
};

struct CallResult {
  std::vector<Completion> completions;
  Usage usage;         // for the whole call, as the API reported it
  std::string model;   // as the API named it (e.g. a dated version)
  double latency_ms = 0.0;
  // The one completion stands for every sample asked (a prompt the API refused outright:
  // asking again would be refused again).
  bool answers_all = false;
  std::string batch_id;  // the provider's batch job that answered it; "" online
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_CALL_RESULT_HPP_
