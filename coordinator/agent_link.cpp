#include "coordinator/agent_link.hpp"

#include <stdexcept>

#include "protocol/curve_keys.hpp"

namespace palladium {

std::shared_ptr<ZmqBridge> open_agent_link(const AgentLinkOptions& o) {
  ZmqBridgeOptions b;
  b.endpoint = o.listen;
  b.allow_path = o.allow;
  b.max_message_bytes = o.max_message_bytes;
  b.insecure_plaintext = o.insecure_plaintext;
  if (o.insecure_plaintext) {
    if (!o.server_key_file.empty() || !o.allow.empty())
      throw AgentLinkError("agents.insecure_plaintext",
                           "insecure plaintext cannot be combined with a server key or an "
                           "allowlist");
  } else {
    try {
      b.curve_secret_key = o.server_key_file.empty()
                               ? keys::generate().secret_key
                               : keys::read_certificate(o.server_key_file, true).secret_key;
    } catch (const keys::KeyError& e) {
      throw AgentLinkError("agents.server_key", e.what());
    }
    if (!o.allow.empty()) {
      try {
        keys::read_allowlist(o.allow);
      } catch (const keys::KeyError& e) {
        throw AgentLinkError("agents.allow", e.what());
      }
    }
  }
  try {
    return std::make_shared<ZmqBridge>(std::move(b));
  } catch (const std::exception& e) {
    throw AgentLinkError("agents.listen", e.what());
  }
}

}  // namespace palladium
