// The LLM seam: what a search asks for and what a model answers.
//
// Two kinds of provider answer a ChatRequest:
//   - a Provider (this file) answers one sample per blocking complete() call, in process: the
//     offline ones (replay, synthetic);
//   - an HttpProvider (llm/http_provider.hpp) only builds HTTP requests and parses HTTP
//     responses for a remote API (OpenAI-compatible chat completions, Gemini generateContent);
//     the transport (llm/http_transport.hpp) moves the bytes.
// The llm_gateway actor drives both through llm/call_runner.hpp and adds what neither does:
// concurrency caps, rate limits, retries, coalescing, the response cache and the accounting.
//
// Failures are ProviderError, which carries an Errc (protocol/errc.hpp) so the retry decision
// is made by code, never by message text. A failure is never turned into a response.
//
// A Provider is not required to be thread-safe; its owner serialises calls.

#ifndef PALLADIUM_LLM_PROVIDER_HPP_
#define PALLADIUM_LLM_PROVIDER_HPP_

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/errc.hpp"
#include "protocol/taxonomy.hpp"

namespace palladium {

struct ChatRequest {
  std::string workload_id;
  // What the search asks for (code, plan, score, repair, menu): recorded with the call, and
  // the offline synthetic model answers by it as a real model answers by the prompt's task.
  SampleRole role = SampleRole::code;
  int sample_index = 0;
  uint64_t seed = 0;  // the search seed; part of the cache key
  std::string system_prompt;
  std::string user_prompt;
  // Overrides llm.temperature for this request (e.g. 0 for a deterministic score).
  std::optional<double> temperature;
  // Who asked: stored with the call and the response so reports can split tokens and
  // dollars per method and workload. The gateway fills nothing in here.
  int64_t run_id = 0;
  std::string method;
};

// Tokens as the API reported them. `completion_tokens` is the visible answer only and
// `thinking_tokens` the hidden reasoning (OpenAI completion_tokens_details.reasoning_tokens,
// which OpenAI also counts inside completion_tokens; Gemini thoughtsTokenCount, which Gemini
// does not count in candidatesTokenCount). Both are billed as output.
struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  // The part of prompt_tokens the provider served from its prompt cache (OpenAI
  // usage.prompt_tokens_details.cached_tokens, Gemini usageMetadata.cachedContentTokenCount);
  // both APIs count these inside prompt_tokens too, and bill them at the cached rate.
  int64_t cached_prompt_tokens = 0;
  bool estimated = false;  // true when the counts are not the API's own (chars / 4)
  // Answered through a provider batch job, so billed at the batch rate (llm.mode: batch sends
  // some roles or methods online and the rest in jobs: the price follows the call).
  bool batch = false;

  int64_t output_tokens() const { return completion_tokens + thinking_tokens; }
  Usage& operator+=(const Usage& o) {
    prompt_tokens += o.prompt_tokens;
    completion_tokens += o.completion_tokens;
    thinking_tokens += o.thinking_tokens;
    cached_prompt_tokens += o.cached_prompt_tokens;
    estimated = estimated || o.estimated;
    batch = batch || o.batch;
    return *this;
  }
};

struct ChatResponse {
  std::string text;   // the raw response, code fences and all
  std::string model;  // the model that answered, as the provider names it
  // This sample's share of its call's usage (a call of n samples splits its usage n ways, so
  // the shares of a call sum to what the API reported).
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int thinking_tokens = 0;
  int cached_prompt_tokens = 0;  // of prompt_tokens, served from the provider's prompt cache
  bool tokens_estimated = false;  // true when counts are not the API's own
  double latency_ms = 0.0;        // of the call that produced it
  // The API's own spelling ("stop", "length", "STOP", "MAX_TOKENS", "SAFETY", ...); "" for
  // offline providers. `truncated` is true when the answer hit the output token limit: it is
  // stored and evaluated like any response (its code may be cut off), never retried.
  std::string finish_reason;
  bool truncated = false;
  double cost_usd = 0.0;  // this sample's share of its call's price (0 for offline providers)
  // Set by the gateway: true when the response came from the response cache, so this run
  // paid nothing for it; and the cache row that holds it (0 when nothing was stored).
  bool cached = false;
  int64_t response_id = 0;
};

// A failed call. code() says what to do next (protocol/errc.hpp): retryable codes (429, 5xx,
// timeouts, dropped connections, a malformed body) may succeed later unchanged; the others
// (a bad key, a bad request, a missing corpus) need a fix first. The message names the
// provider and, for HTTP, the status; it never contains an API key.
class ProviderError : public std::runtime_error {
 public:
  ProviderError(const std::string& what, bool retryable)
      : ProviderError(retryable ? Errc::unavailable : Errc::failed_precondition, what) {}
  ProviderError(Errc code, const std::string& what,
                std::optional<std::chrono::milliseconds> retry_after = std::nullopt,
                int http_status = 0)
      : std::runtime_error(what),
        code_(code),
        retry_after_(retry_after),
        http_status_(http_status) {}

  Errc code() const { return code_; }
  bool retryable() const { return palladium::retryable(code_); }
  // What the server asked us to wait (Retry-After, retry-after-ms, Gemini RetryInfo).
  std::optional<std::chrono::milliseconds> retry_after() const { return retry_after_; }
  int http_status() const { return http_status_; }  // 0 when there was no HTTP answer

 private:
  Errc code_;
  std::optional<std::chrono::milliseconds> retry_after_;
  int http_status_;
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
