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

#include <chrono>
#include <cstddef>
#include <cstdint>
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
  // What is left of the samples' total deadline (llm.call_deadline_s): a remote runner cuts
  // its HTTP timeout to it, so a hung server cannot hold the call past the deadline.
  std::optional<std::chrono::milliseconds> time_left;
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

// What a remote runner does when the server counts far fewer prompt tokens than were sent:
// a chat template that drops the system message, or a prompt truncated to the context, makes
// the call look fine while the model never saw the task (llama.cpp's server counted 690
// prompt tokens for a 17,900-character system prompt plus the user prompt). A shortfall is
// reported prompt tokens below min_ratio * the chars/4 estimate, for prompts of at least
// min_chars; real tokenizers give 2-5 characters a token, so 0.5 flags only a loss.
struct PromptCheck {
  double min_ratio = 0.5;
  size_t min_chars = 400;
  bool fail = true;  // true: the call fails with Errc::failed_precondition "prompt_shortfall";
                     // false: a warning in the log, and the call goes on
};

// The prompt_shortfall error text when `reported` tokens for a prompt of `prompt_chars`
// characters falls short under `check`; "" when it does not.
std::string prompt_shortfall(const PromptCheck& check, const std::string& provider,
                             int64_t reported, size_t prompt_chars, bool system_separate);

// Remote: one HTTP exchange per call. Usage the server did not report is estimated from the
// text (chars / 4) and marked estimated. A result with no completion is a retryable error.
std::unique_ptr<CallRunner> make_http_runner(std::shared_ptr<HttpProvider> provider,
                                             std::shared_ptr<HttpTransport> transport,
                                             PromptCheck check = {});

}  // namespace palladium

#endif  // PALLADIUM_LLM_CALL_RUNNER_HPP_
