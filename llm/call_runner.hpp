// One provider call, started asynchronously: the one interface the llm_gateway uses for
// every provider, offline (replay, synthetic: llm/provider.hpp) or remote (OpenAI, Gemini:
// llm/http_provider.hpp over an llm/http_transport.hpp).
//
// A call answers `sample_indices.size()` samples of one prompt. Remote runners send one
// HTTP request with n = that many; offline runners call Provider::complete() once per index
// (the replay corpus picks its file by sample index).
//
// Threading: start() may be called from any thread; `done` runs exactly once, either before
// start() returns (offline runners) or on the transport's thread (remote runners).

#ifndef PALLADIUM_LLM_CALL_RUNNER_HPP_
#define PALLADIUM_LLM_CALL_RUNNER_HPP_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/call_result.hpp"
#include "llm/http_provider.hpp"
#include "llm/http_transport.hpp"
#include "llm/provider.hpp"

namespace palladium {

struct ProviderCall {
  ChatRequest request;              // the prompt (sample_index is the first sample's)
  std::vector<int> sample_indices;  // the samples this call answers; size() >= 1
};

// Exactly one of the two is set.
struct CallOutcome {
  std::optional<CallResult> result;
  std::optional<ProviderError> error;
};

class CallRunner {
 public:
  using Done = std::function<void(CallOutcome)>;
  virtual ~CallRunner();

  virtual std::string provider() const = 0;  // "replay", "openai", ...
  virtual std::string model() const = 0;
  virtual int max_samples_per_call() const = 0;
  // The canonical sampling parameters `request` is answered under (llm/sampling_params.hpp,
  // with the request's temperature override applied): part of the response cache key, so an
  // answer drawn under other settings is never reused. "{}" for a provider that takes none.
  virtual std::string params_json(const ChatRequest& request) const = 0;

  virtual void start(const ProviderCall& call, Done done) = 0;
};

// Offline: Provider::complete() per sample index, inline in start(). Token counts of the
// samples are summed into the call's usage.
std::unique_ptr<CallRunner> make_local_runner(std::shared_ptr<Provider> provider,
                                              int max_samples_per_call = 8);

// Remote: one HTTP exchange per call. Usage the server did not report is estimated from the
// text (chars / 4) and marked estimated. A result with no completion is a retryable error.
std::unique_ptr<CallRunner> make_http_runner(std::shared_ptr<HttpProvider> provider,
                                             std::shared_ptr<HttpTransport> transport);

}  // namespace palladium

#endif  // PALLADIUM_LLM_CALL_RUNNER_HPP_
