// Where a ZeroMQ endpoint leads, for the link's security policy: a plaintext (unauthenticated)
// link is allowed only where no other machine can reach it.

#ifndef PALLADIUM_PROTOCOL_ENDPOINT_HPP_
#define PALLADIUM_PROTOCOL_ENDPOINT_HPP_

#include <string>

namespace palladium {

// True for tcp://127.x.y.z:PORT, tcp://localhost:PORT and tcp://[::1]:PORT.
bool is_loopback_endpoint(const std::string& endpoint);

}  // namespace palladium

#endif  // PALLADIUM_PROTOCOL_ENDPOINT_HPP_
