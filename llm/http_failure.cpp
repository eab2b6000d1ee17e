#include "llm/http_failure.hpp"

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <regex>

namespace palladium {
namespace {

// RFC 9110 IMF-fixdate, e.g. "Wed, 21 Oct 2015 07:28:00 GMT".
std::optional<std::chrono::system_clock::time_point> parse_http_date(const std::string& text) {
  std::tm tm{};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char month[4] = {0};
  int day = 0, year = 0, h = 0, m = 0, s = 0;
  if (std::sscanf(text.c_str(), "%*3s, %d %3s %d %d:%d:%d GMT", &day, month, &year, &h, &m, &s) != 6)
    return std::nullopt;
  int mon = -1;
  for (int i = 0; i < 12; ++i)
    if (std::string(month) == kMonths[i]) mon = i;
  if (mon < 0) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  const time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::optional<double> parse_seconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  while (end && *end == ' ') ++end;
  if (!end || *end != '\0' || !(v >= 0) || v > 86400.0 * 7) return std::nullopt;
  return v;
}

std::string trimmed_head(const std::string& body, size_t n) {
  std::string head = body.substr(0, n);
  for (char& c : head)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (body.size() > n) head += "...";
  return head;
}

}  // namespace

Errc errc_for_http_status(int status) {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return Errc::invalid_argument;
    case 401:
      return Errc::unauthenticated;
    case 403:
      return Errc::permission_denied;
    case 404:
      return Errc::not_found;
    case 408:
    case 504:
      return Errc::deadline_exceeded;
    case 409:
      return Errc::aborted;
    case 429:
      return Errc::resource_exhausted;
    default:
      if (status >= 500 && status <= 599) return Errc::unavailable;
      return Errc::failed_precondition;
  }
}

std::optional<std::chrono::milliseconds> retry_after_of(const HttpResponse& response,
                                                        std::chrono::system_clock::time_point now) {
  using std::chrono::milliseconds;
  if (auto ms = parse_seconds(response.header("retry-after-ms")))
    return milliseconds(static_cast<int64_t>(*ms));
  const std::string value = response.header("retry-after");
  if (value.empty()) return std::nullopt;
  if (auto secs = parse_seconds(value)) return milliseconds(static_cast<int64_t>(*secs * 1000.0));
  if (auto when = parse_http_date(value)) {
    auto delta = std::chrono::duration_cast<milliseconds>(*when - now);
    return delta.count() > 0 ? delta : milliseconds(0);
  }
  return std::nullopt;
}

std::string redact(std::string text, const std::string& secret) {
  static const std::string kMark = "[redacted]";
  if (!secret.empty()) {
    for (size_t pos = text.find(secret); pos != std::string::npos;
         pos = text.find(secret, pos + kMark.size())) {
      text.replace(pos, secret.size(), kMark);
    }
  }
  // OpenAI-style (sk-..., also partially starred) and Google API keys.
  static const std::regex kKeyShaped(R"((sk-[A-Za-z0-9_*\-]{6,})|(AIza[0-9A-Za-z_\-]{10,}))");
  return std::regex_replace(text, kKeyShaped, kMark);
}

ProviderError http_failure(const std::string& provider, const HttpResponse& response,
                           const std::string& api_message,
                           std::optional<std::chrono::milliseconds> body_retry_after,
                           const std::string& secret, std::optional<Errc> code_override) {
  if (response.failure != TransportFailure::none) {
    Errc code = Errc::unavailable;
    if (response.failure == TransportFailure::timeout) code = Errc::deadline_exceeded;
    if (response.failure == TransportFailure::cancelled) code = Errc::cancelled;
    return ProviderError(code,
                         redact(provider + ": no HTTP response (" + to_string(response.failure) +
                                    "): " + response.failure_text,
                                secret));
  }
  const Errc code = code_override.value_or(errc_for_http_status(response.status));
  std::string what = provider + ": HTTP " + std::to_string(response.status) + " (" +
                     std::string(to_string(code)) + ")";
  if (!api_message.empty()) {
    what += ": " + api_message;
  } else if (!response.body.empty()) {
    what += ": " + trimmed_head(response.body, 300);
  }
  auto retry_after = retry_after_of(response);
  if (!retry_after) retry_after = body_retry_after;
  return ProviderError(code, redact(what, secret), retry_after, response.status);
}

ProviderError malformed_response(const std::string& provider, const HttpResponse& response,
                                 const std::string& what, const std::string& secret) {
  return ProviderError(Errc::unavailable,
                       redact(provider + ": HTTP " + std::to_string(response.status) +
                                  " with an unusable body (" + what + "): " +
                                  trimmed_head(response.body, 200),
                              secret),
                       std::nullopt, response.status);
}

}  // namespace palladium
