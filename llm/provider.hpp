// The LLM seam: one chat completion per call.
//
// Providers (replay, OpenAI-compatible, Gemini) implement Provider. The
// llm_gateway actor owns them and adds batching, rate limits, retries and
// accounting; a Provider does one call and reports failure by throwing
// ProviderError, whose retryable() tells the gateway whether to try again.
//
// A Provider is not required to be thread-safe; its owner serialises calls.

#ifndef PALLADIUM_LLM_PROVIDER_HPP_
#define PALLADIUM_LLM_PROVIDER_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "protocol/taxonomy.hpp"

namespace palladium {

struct ChatRequest {
  std::string workload_id;
  // What the search asks for (code, plan, score, repair, menu): recorded with the call, and
  // the offline synthetic model answers by it as a real model answers by the prompt's task.
  SampleRole role = SampleRole::code;
  int sample_index = 0;
  uint64_t seed = 0;  // the search seed; providers that sample may use it
  std::string system_prompt;
  std::string user_prompt;
};

struct ChatResponse {
  std::string text;   // the raw response, code fences and all
  std::string model;  // the model that answered, as the provider names it
  int prompt_tokens = 0;
  int completion_tokens = 0;
  bool tokens_estimated = false;  // true when counts are not the API's own
  double latency_ms = 0.0;
};

// A failed call. retryable() is true for transient failures (rate limits,
// 5xx, timeouts), where the same request may succeed later; false for
// failures that need a fix first (bad key, missing corpus, bad request).
class ProviderError : public std::runtime_error {
 public:
  ProviderError(const std::string& what, bool retryable)
      : std::runtime_error(what), retryable_(retryable) {}
  bool retryable() const { return retryable_; }

 private:
  bool retryable_;
};

class Provider {
 public:
  virtual ~Provider();

  // One completion. Throws ProviderError on failure; never returns a
  // partial response.
  virtual ChatResponse complete(const ChatRequest& request) = 0;

  // A short stable name for logs and the llm_calls table, e.g. "replay".
  virtual std::string name() const = 0;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_PROVIDER_HPP_
