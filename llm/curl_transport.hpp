// The production HttpTransport: libcurl's multi interface on one I/O thread.
//
// Every exchange of every provider runs on that one thread, so many calls can be in flight
// without a thread each; keep-alive connections are reused between calls to the same host.
// HTTPS verifies the peer and the host name against the system CA store. Nothing is logged:
// request headers carry API keys.
//
// Threading: send() is thread-safe and never blocks on the network. `done` runs on the I/O
// thread. Destroying the transport stops the thread; exchanges still in flight complete with
// TransportFailure::cancelled before the destructor returns.

#ifndef PALLADIUM_LLM_CURL_TRANSPORT_HPP_
#define PALLADIUM_LLM_CURL_TRANSPORT_HPP_

#include <memory>

#include "llm/http_transport.hpp"

namespace palladium {

struct CurlTransportOptions {
  // Connections kept open per host (0: libcurl's default). The gateway's own concurrency cap
  // is what limits calls; this only bounds sockets.
  long max_host_connections = 0;
};

std::unique_ptr<HttpTransport> make_curl_transport(CurlTransportOptions options = {});

}  // namespace palladium

#endif  // PALLADIUM_LLM_CURL_TRANSPORT_HPP_
