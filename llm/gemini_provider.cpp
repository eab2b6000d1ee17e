#include "llm/gemini_provider.hpp"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "llm/http_failure.hpp"

namespace palladium {
namespace {

using nlohmann::json;

int64_t int_field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return 0;
  const json& v = obj[key];
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

// {"error": {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED", "details": [
//   {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"}]}}
struct ApiError {
  std::string message;
  std::optional<std::chrono::milliseconds> retry_delay;
  std::optional<Errc> code;  // when the details say more than the HTTP status
};

ApiError api_error(const std::string& body) {
  ApiError out;
  json j = json::parse(body, nullptr, false);
  if (j.is_array() && !j.empty()) j = j[0];  // some front ends wrap the error in a list
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return out;
  const json& e = j["error"];
  out.message = e.value("message", std::string());
  if (e.contains("status") && e["status"].is_string())
    out.message += " [" + e["status"].get<std::string>() + "]";
  if (e.contains("details") && e["details"].is_array()) {
    for (const json& d : e["details"]) {
      if (!d.is_object()) continue;
      // google.rpc.ErrorInfo: a bad key is a 400 whose reason says what it really is.
      if (d.value("reason", std::string()) == "API_KEY_INVALID") out.code = Errc::unauthenticated;
      if (!d.contains("retryDelay") || !d["retryDelay"].is_string()) continue;
      const std::string delay = d["retryDelay"].get<std::string>();  // protobuf Duration: "13s"
      char* end = nullptr;
      const double secs = std::strtod(delay.c_str(), &end);
      if (end && *end == 's' && secs >= 0)
        out.retry_delay = std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
    }
  }
  return out;
}

class GeminiProvider : public HttpProvider {
 public:
  explicit GeminiProvider(HttpProviderConfig config) : c_(std::move(config)) {
    if (c_.base_url.empty()) c_.base_url = "https://generativelanguage.googleapis.com/v1beta";
    while (!c_.base_url.empty() && c_.base_url.back() == '/') c_.base_url.pop_back();
    if (c_.max_samples_per_call <= 0) c_.max_samples_per_call = 4;
    // The API names models "models/<id>"; accept either spelling in the config.
    model_path_ = c_.model.rfind("models/", 0) == 0 ? c_.model : "models/" + c_.model;
  }

  std::string name() const override { return "gemini"; }
  std::string model() const override { return c_.model; }
  int max_samples_per_call() const override { return c_.max_samples_per_call; }

  HttpRequest build_request(const ChatRequest& request, int n) const override {
    HttpRequest http;
    http.method = "POST";
    http.url = c_.base_url + "/" + model_path_ + ":generateContent";
    http.headers.push_back("Content-Type: application/json");
    if (!c_.api_key.empty()) http.headers.push_back("x-goog-api-key: " + c_.api_key);
    http.body = request_body(request, n).dump();
    http.timeout = c_.timeout;
    return http;
  }

  CallResult parse_response(const HttpResponse& response) const override {
    if (response.failure != TransportFailure::none || response.status < 200 ||
        response.status > 299) {
      ApiError e = api_error(response.body);
      throw http_failure(name(), response, e.message, e.retry_delay, c_.api_key, e.code);
    }
    json j = json::parse(response.body, nullptr, false);
    if (j.is_discarded()) throw malformed_response(name(), response, "not JSON", c_.api_key);
    if (!j.is_object()) throw malformed_response(name(), response, "not an object", c_.api_key);
    return parse_generate_content(j, response);
  }

  // A GenerateContentResponse object (also what batch mode returns per request).
  CallResult parse_generate_content(const json& j, const HttpResponse& response) const {
    CallResult result;
    result.model = j.value("modelVersion", c_.model);
    result.latency_ms = response.elapsed_ms;
    if (j.contains("usageMetadata") && j["usageMetadata"].is_object()) {
      const json& u = j["usageMetadata"];
      result.usage.prompt_tokens = int_field(u, "promptTokenCount");
      result.usage.completion_tokens = int_field(u, "candidatesTokenCount");
      result.usage.thinking_tokens = int_field(u, "thoughtsTokenCount");
      result.usage.cached_prompt_tokens =
          std::min(int_field(u, "cachedContentTokenCount"), result.usage.prompt_tokens);
    } else {
      result.usage.estimated = true;
    }
    const bool has_candidates = j.contains("candidates") && j["candidates"].is_array() &&
                                !j["candidates"].empty();
    if (!has_candidates) {
      if (j.contains("promptFeedback") && j["promptFeedback"].is_object() &&
          j["promptFeedback"].contains("blockReason")) {
        Completion blocked;
        blocked.finish_reason =
            "BLOCKED:" + j["promptFeedback"]["blockReason"].get<std::string>();
        result.completions.push_back(blocked);
        result.answers_all = true;
        return result;
      }
      throw malformed_response(name(), response, "no \"candidates\"", c_.api_key);
    }
    std::vector<std::pair<int64_t, Completion>> indexed;
    size_t chars = 0;
    for (const json& cand : j["candidates"]) {
      if (!cand.is_object())
        throw malformed_response(name(), response, "a candidate is not an object", c_.api_key);
      Completion c;
      if (cand.contains("content") && cand["content"].is_object() &&
          cand["content"].contains("parts") && cand["content"]["parts"].is_array()) {
        for (const json& part : cand["content"]["parts"]) {
          if (!part.is_object() || !part.contains("text") || !part["text"].is_string()) continue;
          if (part.value("thought", false)) continue;  // thinking summaries are not the answer
          c.text += part["text"].get<std::string>();
        }
      }
      if (cand.contains("finishReason") && cand["finishReason"].is_string())
        c.finish_reason = cand["finishReason"].get<std::string>();
      c.truncated = c.finish_reason == "MAX_TOKENS";
      chars += c.text.size();
      const int64_t index = cand.contains("index") && cand["index"].is_number_integer()
                                ? cand["index"].get<int64_t>()
                                : static_cast<int64_t>(indexed.size());
      indexed.emplace_back(index, std::move(c));
    }
    std::stable_sort(indexed.begin(), indexed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [index, c] : indexed) result.completions.push_back(std::move(c));
    if (result.usage.estimated) result.usage.completion_tokens = static_cast<int64_t>((chars + 3) / 4);
    return result;
  }

  const SamplingParams& sampling() const override { return c_.sampling; }

 private:
  json request_body(const ChatRequest& request, int n) const {
    json body = json::object();
    std::string user = request.user_prompt;
    if (c_.fold_system_prompt && !request.system_prompt.empty()) {
      user = request.system_prompt + "\n\n" + user;
    } else if (!request.system_prompt.empty()) {
      body["systemInstruction"] = {{"parts", json::array({{{"text", request.system_prompt}}})}};
    }
    body["contents"] =
        json::array({{{"role", "user"}, {"parts", json::array({{{"text", user}}})}}});
    json gen = json::object();
    if (n > 1) gen["candidateCount"] = n;
    if (c_.send_seed) gen["seed"] = request_seed(request.seed, request.sample_index);
    const auto& s = c_.sampling;
    if (request.temperature) {
      gen["temperature"] = *request.temperature;
    } else if (s.temperature) {
      gen["temperature"] = *s.temperature;
    }
    if (s.top_p) gen["topP"] = *s.top_p;
    if (s.max_output_tokens > 0) gen["maxOutputTokens"] = s.max_output_tokens;
    json thinking = json::object();
    if (s.thinking_budget) thinking["thinkingBudget"] = *s.thinking_budget;
    if (!s.thinking_level.empty()) thinking["thinkingLevel"] = s.thinking_level;
    if (!thinking.empty()) gen["thinkingConfig"] = thinking;
    if (!gen.empty()) body["generationConfig"] = gen;
    return body;
  }

  HttpProviderConfig c_;
  std::string model_path_;
};

}  // namespace

std::unique_ptr<HttpProvider> make_gemini_provider(HttpProviderConfig config) {
  return std::make_unique<GeminiProvider>(std::move(config));
}

}  // namespace palladium
