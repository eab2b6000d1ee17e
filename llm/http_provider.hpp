// A remote LLM API as a pure translator: ChatRequest -> HttpRequest, HttpResponse ->
// CallResult. No sockets, no threads, no clocks: the transport (llm/http_transport.hpp) moves
// the bytes and the gateway decides when to call and whether to retry.
//
// Implementations: llm/openai_provider.hpp (OpenAI-compatible chat completions: OpenAI,
// vLLM, SGLang, llama.cpp's server, ...) and llm/gemini_provider.hpp (Gemini generateContent).
//
// The API key lives in the provider (it goes into request headers, never into a URL) and in
// nothing that leaves it: every error message is redacted (llm/http_failure.hpp).
//
// Thread-safe: all methods are const and touch no shared state.

#ifndef PALLADIUM_LLM_HTTP_PROVIDER_HPP_
#define PALLADIUM_LLM_HTTP_PROVIDER_HPP_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "llm/call_result.hpp"
#include "llm/http_transport.hpp"
#include "llm/provider.hpp"
#include "llm/sampling_params.hpp"

namespace palladium {

struct HttpProviderConfig {
  std::string model;
  std::string base_url;  // "" = the API's public endpoint
  std::string api_key;   // "" = send none (a local server)
  SamplingParams sampling;
  // Samples one call may carry (OpenAI n, Gemini candidateCount); 0 = the provider's default.
  int max_samples_per_call = 0;
  // OpenAI-compatible only: the name of the output limit field, "max_completion_tokens"
  // (OpenAI's current name, required by its reasoning models) or "max_tokens" (older servers).
  // A server that ignores it (llama.cpp's ignores max_completion_tokens) is noticed by an
  // answer longer than the limit; the provider then warns once and sends max_tokens.
  std::string max_tokens_field = "max_completion_tokens";
  // For models or chat templates without a system role: the system text goes first in the
  // one user message (separated by a blank line) instead of in its own message.
  bool fold_system_prompt = false;
  // Sends a seed (OpenAI `seed`, Gemini generationConfig.seed) derived from the request's
  // search seed and first sample index (request_seed()), so a server that honours seeds
  // answers a rerun the same way and two calls for other samples differently.
  bool send_seed = true;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // per HTTP exchange
};

// The seed a call for samples starting at `first_sample` of a search seeded `search_seed`
// sends: a splitmix64 mix of both, in [0, 2^31) because Gemini's field is an int32.
int64_t request_seed(uint64_t search_seed, int first_sample);

class HttpProvider {
 public:
  virtual ~HttpProvider();

  virtual std::string name() const = 0;  // "openai", "gemini"
  virtual std::string model() const = 0;
  virtual int max_samples_per_call() const = 0;
  // How the model is asked to sample (a request's temperature override aside).
  virtual const SamplingParams& sampling() const = 0;

  // The request for `n` (>= 1, <= max_samples_per_call()) samples of `request`.
  virtual HttpRequest build_request(const ChatRequest& request, int n) const = 0;

  // The call's completions and usage. Throws ProviderError for a transport failure, a
  // non-2xx status (immediately final for 400/401/403: see http_failure.hpp) or a body that
  // is not the documented JSON (retryable). A completion cut off by the token limit is a
  // result (truncated = true), not an error.
  virtual CallResult parse_response(const HttpResponse& response) const = 0;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_HTTP_PROVIDER_HPP_
