// Turning an HTTP answer that is not a usable response into a ProviderError.
//
// Status -> Errc (protocol/errc.hpp), so the gateway's retry decision is by code:
//   400, 413, 422 -> invalid_argument      401 -> unauthenticated    403 -> permission_denied
//   404 -> not_found                       408 -> deadline_exceeded  409 -> aborted
//   429 -> resource_exhausted              504 -> deadline_exceeded  other 5xx -> unavailable
//   other 4xx -> failed_precondition
// Transport failures: timeout -> deadline_exceeded; connect, dropped -> unavailable;
// cancelled -> cancelled.
//
// Messages name the provider and the status and quote the API's own error text, with every
// occurrence of the API key and anything shaped like a key (sk-..., AIza...) replaced by
// "[redacted]": error bodies do echo keys ("Incorrect API key provided: sk-ab***yz").

#ifndef PALLADIUM_LLM_HTTP_FAILURE_HPP_
#define PALLADIUM_LLM_HTTP_FAILURE_HPP_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "llm/http_transport.hpp"
#include "llm/provider.hpp"

namespace palladium {

Errc errc_for_http_status(int status);

// Retry-After as delta-seconds ("30", "1.5") or an HTTP-date (RFC 9110), and OpenAI's
// retry-after-ms, whichever is present (retry-after-ms wins). nullopt when absent or
// unreadable; a date in the past gives 0.
std::optional<std::chrono::milliseconds> retry_after_of(
    const HttpResponse& response,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// `text` with `secret` (if non-empty) and key-shaped tokens replaced by "[redacted]".
std::string redact(std::string text, const std::string& secret);

// The error for a transport failure or a non-2xx status. `api_message` is the error text the
// provider found in the body ("" if none); `body_retry_after` a delay the body asked for
// (Gemini's RetryInfo), used when no header gives one; `code` replaces the status's code when
// the body says more than the status (Gemini answers a bad key with 400 API_KEY_INVALID).
ProviderError http_failure(const std::string& provider, const HttpResponse& response,
                           const std::string& api_message,
                           std::optional<std::chrono::milliseconds> body_retry_after,
                           const std::string& secret, std::optional<Errc> code = std::nullopt);

// A retryable error for a 2xx answer whose body is not what the API documents (malformed
// or cut-off JSON, missing fields): `what` says what was wrong, and the start of the body is
// quoted (redacted) so the log shows what arrived.
ProviderError malformed_response(const std::string& provider, const HttpResponse& response,
                                 const std::string& what, const std::string& secret);

}  // namespace palladium

#endif  // PALLADIUM_LLM_HTTP_FAILURE_HPP_
