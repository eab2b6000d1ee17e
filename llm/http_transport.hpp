// The HTTP seam under the LLM providers: one request out, one response (or a transport
// failure) back, asynchronously.
//
// Providers build HttpRequests and parse HttpResponses (llm/http_provider.hpp); they never
// touch a socket. Production uses the libcurl transport (llm/curl_transport.hpp); tests may
// use any other implementation, e.g. one that answers from a script.
//
// Threading: send() may be called from any thread. `done` is called exactly once per send(),
// on a thread the transport chooses (never inside send() itself for the curl transport), and
// must not block for long: hand the response to an actor and return.

#ifndef PALLADIUM_LLM_HTTP_TRANSPORT_HPP_
#define PALLADIUM_LLM_HTTP_TRANSPORT_HPP_

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace palladium {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  // Header lines "Name: value". May hold credentials: a transport never logs them.
  std::vector<std::string> headers;
  std::string body;
  // The whole exchange, connect to last byte; 0 = no limit.
  std::chrono::milliseconds timeout{0};
  // A request that must not reach the server twice (a batch create). libcurl silently sends a
  // request again when the reused connection it went out on closes before any answer, though
  // the server may have acted on it (seen against the fake server: one create, two jobs); on
  // a fresh connection, used once, it does not.
  bool fresh_connection = false;
};

// Why there is no HTTP status.
enum class TransportFailure {
  none,       // an HTTP response arrived (any status)
  timeout,    // the request's timeout expired
  connect,    // could not connect (refused, unreachable, DNS)
  dropped,    // the connection closed before a complete response (incl. a truncated body)
  cancelled,  // the transport shut down with the request in flight
  other,
};

struct HttpResponse {
  int status = 0;  // 0 when failure != none
  // Lower-cased header names; the last value wins for repeated headers.
  std::map<std::string, std::string> headers;
  std::string body;
  TransportFailure failure = TransportFailure::none;
  std::string failure_text;  // the transport's own words, for messages
  double elapsed_ms = 0.0;

  // The header's value, or "" when absent. `name` must be lower case.
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

const char* to_string(TransportFailure failure);

class HttpTransport {
 public:
  using Done = std::function<void(HttpResponse)>;
  virtual ~HttpTransport();

  // Starts the exchange. `done` runs exactly once with the response or the failure.
  virtual void send(HttpRequest request, Done done) = 0;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_HTTP_TRANSPORT_HPP_
