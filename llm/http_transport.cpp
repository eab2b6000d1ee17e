#include "llm/http_transport.hpp"

namespace palladium {

// Out of line so the vtable has one home.
HttpTransport::~HttpTransport() = default;

const char* to_string(TransportFailure failure) {
  switch (failure) {
    case TransportFailure::none: return "none";
    case TransportFailure::timeout: return "timeout";
    case TransportFailure::connect: return "connect";
    case TransportFailure::dropped: return "dropped";
    case TransportFailure::cancelled: return "cancelled";
    case TransportFailure::other: return "other";
  }
  return "other";
}

}  // namespace palladium
