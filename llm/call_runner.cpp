#include "llm/call_runner.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace palladium {
namespace {

int64_t estimate_tokens(size_t chars) { return static_cast<int64_t>((chars + 3) / 4); }

class LocalRunner : public CallRunner {
 public:
  LocalRunner(std::shared_ptr<Provider> provider, int max_n)
      : provider_(std::move(provider)), max_n_(max_n < 1 ? 1 : max_n) {}

  std::string provider() const override { return provider_->name(); }
  std::string model() const override { return provider_->name(); }
  int max_samples_per_call() const override { return max_n_; }
  std::string params_json(const ChatRequest& request) const override {
    if (!request.temperature) return "{}";
    return nlohmann::json{{"temperature", *request.temperature}}.dump();
  }

  void start(const ProviderCall& call, Done done) override {
    const auto t0 = std::chrono::steady_clock::now();
    CallOutcome outcome;
    try {
      CallResult result;
      for (int index : call.sample_indices) {
        ChatRequest one = call.request;
        one.sample_index = index;
        ChatResponse r = provider_->complete(one);
        Completion c;
        c.text = std::move(r.text);
        c.finish_reason = r.finish_reason;
        c.truncated = r.truncated;
        result.completions.push_back(std::move(c));
        result.model = r.model;
        result.usage.prompt_tokens += r.prompt_tokens;
        result.usage.completion_tokens += r.completion_tokens;
        result.usage.thinking_tokens += r.thinking_tokens;
        result.usage.cached_prompt_tokens += r.cached_prompt_tokens;
        result.usage.estimated = result.usage.estimated || r.tokens_estimated;
      }
      result.latency_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      outcome.result = std::move(result);
    } catch (const ProviderError& e) {
      outcome.error = e;
    } catch (const std::exception& e) {
      outcome.error = ProviderError(Errc::internal, provider_->name() + ": " + e.what());
    }
    done(std::move(outcome));
  }

 private:
  std::shared_ptr<Provider> provider_;
  int max_n_;
};

class HttpRunner : public CallRunner {
 public:
  HttpRunner(std::shared_ptr<HttpProvider> provider, std::shared_ptr<HttpTransport> transport,
             PromptCheck check)
      : provider_(std::move(provider)), transport_(std::move(transport)), check_(check) {}

  std::string provider() const override { return provider_->name(); }
  std::string model() const override { return provider_->model(); }
  int max_samples_per_call() const override { return provider_->max_samples_per_call(); }
  std::string params_json(const ChatRequest& request) const override {
    SamplingParams s = provider_->sampling();
    if (request.temperature) s.temperature = request.temperature;
    return s.canonical();
  }

  void start(const ProviderCall& call, Done done) override {
    const int n = static_cast<int>(call.sample_indices.size());
    HttpRequest http = provider_->build_request(call.request, n);
    if (call.time_left && *call.time_left < http.timeout)
      http.timeout = std::max(std::chrono::milliseconds(1), *call.time_left);
    const size_t prompt_chars = call.request.system_prompt.size() + call.request.user_prompt.size();
    const bool system_separate = !call.request.system_prompt.empty();
    transport_->send(std::move(http), [provider = provider_, done = std::move(done), n,
                                       prompt_chars, check = check_,
                                       system_separate](HttpResponse response) {
      CallOutcome outcome;
      try {
        CallResult result = provider->parse_response(response);
        if (result.answers_all && !result.completions.empty()) {
          result.completions.resize(static_cast<size_t>(n), result.completions.front());
        }
        if (result.completions.empty()) {
          throw ProviderError(Errc::unavailable, provider->name() + ": HTTP " +
                                                     std::to_string(response.status) +
                                                     " answered with no completion");
        }
        if (result.usage.estimated && result.usage.prompt_tokens == 0)
          result.usage.prompt_tokens = estimate_tokens(prompt_chars);
        if (!result.usage.estimated) {
          const std::string shortfall =
              prompt_shortfall(check, provider->name(), result.usage.prompt_tokens,
                               prompt_chars, system_separate);
          if (!shortfall.empty()) {
            if (check.fail) throw ProviderError(Errc::failed_precondition, shortfall);
            spdlog::warn("{}", shortfall);
          }
        }
        outcome.result = std::move(result);
      } catch (const ProviderError& e) {
        outcome.error = e;
      } catch (const std::exception& e) {
        outcome.error = ProviderError(Errc::internal, provider->name() + ": " + e.what());
      }
      done(std::move(outcome));
    });
  }

 private:
  std::shared_ptr<HttpProvider> provider_;
  std::shared_ptr<HttpTransport> transport_;
  PromptCheck check_;
};

}  // namespace

CallRunner::~CallRunner() = default;

std::string prompt_shortfall(const PromptCheck& check, const std::string& provider,
                             int64_t reported, size_t prompt_chars, bool system_separate) {
  if (prompt_chars < check.min_chars) return "";
  const int64_t estimate = estimate_tokens(prompt_chars);
  if (static_cast<double>(reported) >= check.min_ratio * static_cast<double>(estimate)) return "";
  std::string msg = provider + ": prompt_shortfall: the server counted " +
                    std::to_string(reported) + " prompt tokens for " +
                    std::to_string(prompt_chars) + " characters of prompt (about " +
                    std::to_string(estimate) +
                    " tokens at 4 characters a token): the model did not see part of the "
                    "prompt (a prompt cut to the server's context length";
  msg += system_separate ? ", or a chat template that drops the system message: "
                           "llm.fold_system_prompt: true puts it in the user message)"
                         : ")";
  return msg;
}

std::unique_ptr<CallRunner> make_local_runner(std::shared_ptr<Provider> provider,
                                              int max_samples_per_call) {
  return std::make_unique<LocalRunner>(std::move(provider), max_samples_per_call);
}

std::unique_ptr<CallRunner> make_http_runner(std::shared_ptr<HttpProvider> provider,
                                             std::shared_ptr<HttpTransport> transport,
                                             PromptCheck check) {
  return std::make_unique<HttpRunner>(std::move(provider), std::move(transport), check);
}

}  // namespace palladium
