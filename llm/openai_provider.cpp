#include "llm/openai_provider.hpp"

#include <algorithm>
#include <atomic>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "llm/http_failure.hpp"

namespace palladium {
namespace {

using nlohmann::json;

int64_t estimate_tokens(size_t chars) { return static_cast<int64_t>((chars + 3) / 4); }

// The API's own error text: {"error": {"message": ..., "type": ..., "code": ...}}.
std::string api_error_message(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error")) return "";
  const json& e = j["error"];
  if (e.is_string()) return e.get<std::string>();
  if (!e.is_object()) return "";
  std::string msg = e.value("message", std::string());
  if (e.contains("type") && e["type"].is_string()) msg += " [" + e["type"].get<std::string>() + "]";
  return msg;
}

int64_t int_field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return 0;
  const json& v = obj[key];
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

class OpenAiProvider : public HttpProvider {
 public:
  explicit OpenAiProvider(HttpProviderConfig config) : c_(std::move(config)) {
    if (c_.base_url.empty()) c_.base_url = "https://api.openai.com/v1";
    while (!c_.base_url.empty() && c_.base_url.back() == '/') c_.base_url.pop_back();
    if (c_.max_samples_per_call <= 0) c_.max_samples_per_call = 8;
    if (c_.max_tokens_field.empty()) c_.max_tokens_field = "max_completion_tokens";
  }

  std::string name() const override { return "openai"; }
  std::string model() const override { return c_.model; }
  int max_samples_per_call() const override { return c_.max_samples_per_call; }

  HttpRequest build_request(const ChatRequest& request, int n) const override {
    json messages = json::array();
    if (c_.fold_system_prompt && !request.system_prompt.empty()) {
      messages.push_back(
          {{"role", "user"}, {"content", request.system_prompt + "\n\n" + request.user_prompt}});
    } else {
      if (!request.system_prompt.empty())
        messages.push_back({{"role", "system"}, {"content", request.system_prompt}});
      messages.push_back({{"role", "user"}, {"content", request.user_prompt}});
    }
    json body = {{"model", c_.model}, {"messages", std::move(messages)}};
    if (n > 1) body["n"] = n;
    if (c_.send_seed) body["seed"] = request_seed(request.seed, request.sample_index);
    const auto& s = c_.sampling;
    if (request.temperature) {
      body["temperature"] = *request.temperature;
    } else if (s.temperature) {
      body["temperature"] = *s.temperature;
    }
    if (s.top_p) body["top_p"] = *s.top_p;
    if (s.max_output_tokens > 0)
      body[limit_ignored_.load() ? "max_tokens" : c_.max_tokens_field] = s.max_output_tokens;
    if (!s.reasoning_effort.empty()) body["reasoning_effort"] = s.reasoning_effort;

    HttpRequest http;
    http.method = "POST";
    http.url = c_.base_url + "/chat/completions";
    http.headers.push_back("Content-Type: application/json");
    if (!c_.api_key.empty()) http.headers.push_back("Authorization: Bearer " + c_.api_key);
    http.body = body.dump();
    http.timeout = c_.timeout;
    return http;
  }

  CallResult parse_response(const HttpResponse& response) const override {
    if (response.failure != TransportFailure::none || response.status < 200 ||
        response.status > 299) {
      throw http_failure(name(), response, api_error_message(response.body), std::nullopt,
                         c_.api_key);
    }
    json j = json::parse(response.body, nullptr, false);
    if (j.is_discarded()) throw malformed_response(name(), response, "not JSON", c_.api_key);
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array())
      throw malformed_response(name(), response, "no \"choices\" array", c_.api_key);

    std::vector<std::pair<int64_t, Completion>> indexed;
    size_t chars = 0;
    for (const json& choice : j["choices"]) {
      if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object())
        throw malformed_response(name(), response, "a choice without \"message\"", c_.api_key);
      const json& msg = choice["message"];
      Completion c;
      if (msg.contains("content") && msg["content"].is_string())
        c.text = msg["content"].get<std::string>();
      if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
        c.finish_reason = choice["finish_reason"].get<std::string>();
      c.truncated = c.finish_reason == "length";
      chars += c.text.size();
      const int64_t index = choice.contains("index") && choice["index"].is_number_integer()
                                ? choice["index"].get<int64_t>()
                                : static_cast<int64_t>(indexed.size());
      indexed.emplace_back(index, std::move(c));
    }
    std::stable_sort(indexed.begin(), indexed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });

    CallResult result;
    for (auto& [index, c] : indexed) result.completions.push_back(std::move(c));
    result.model = j.value("model", c_.model);
    result.latency_ms = response.elapsed_ms;
    if (j.contains("usage") && j["usage"].is_object()) {
      const json& u = j["usage"];
      const int64_t completion = int_field(u, "completion_tokens");
      const int64_t reasoning =
          u.contains("completion_tokens_details") ? int_field(u["completion_tokens_details"],
                                                              "reasoning_tokens")
                                                  : 0;
      result.usage.prompt_tokens = int_field(u, "prompt_tokens");
      result.usage.thinking_tokens = std::min(reasoning, completion);
      result.usage.completion_tokens = completion - result.usage.thinking_tokens;
      if (u.contains("prompt_tokens_details"))
        result.usage.cached_prompt_tokens = std::min(
            int_field(u["prompt_tokens_details"], "cached_tokens"), result.usage.prompt_tokens);
      note_ignored_limit(completion, result.completions.size());
    } else {
      result.usage.estimated = true;
      result.usage.completion_tokens = estimate_tokens(chars);
    }
    return result;
  }

  const SamplingParams& sampling() const override { return c_.sampling; }

 private:
  // An answer longer than its limit means the server never read the limit's field
  // (llama.cpp's server ignores max_completion_tokens and runs until its context is full):
  // say so once, loudly, and send max_tokens from then on.
  void note_ignored_limit(int64_t completion_tokens, size_t completions) const {
    const int64_t limit = c_.sampling.max_output_tokens;
    if (limit <= 0 || completions == 0 || c_.max_tokens_field == "max_tokens") return;
    if (completion_tokens <= limit * static_cast<int64_t>(completions)) return;
    if (limit_ignored_.exchange(true)) return;
    spdlog::warn(
        "{}: the server answered {} output tokens over {} completions with "
        "{}={} per completion: it ignores that field, so max_tokens is sent from now on (set "
        "llm.max_tokens_field: max_tokens for this server)",
        name(), completion_tokens, completions, c_.max_tokens_field, limit);
  }

  HttpProviderConfig c_;
  mutable std::atomic<bool> limit_ignored_{false};
};

}  // namespace

std::unique_ptr<HttpProvider> make_openai_provider(HttpProviderConfig config) {
  return std::make_unique<OpenAiProvider>(std::move(config));
}

}  // namespace palladium
