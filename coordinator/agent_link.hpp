// The coordinator's end of the agent link as `palladium run`, `eval` and `bench` set it up:
// a ZmqBridge that is a CURVE server with an allowlist, unless the user asked for plaintext.
//
// With no server key given, a fresh key pair is made for this process (fine for local agents,
// which get their keys from the coordinator; remote agents need a persistent key made with
// `palladium keys new`). Plaintext beyond loopback needs insecure_plaintext.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "actors/zmq_bridge.hpp"

namespace palladium {

struct AgentLinkOptions {
  std::string listen;              // tcp://HOST:PORT
  std::string server_key_file;     // the coordinator's .key_secret; "" = a fresh pair
  std::string allow;               // allowlist path; "" = only keys allowed in code
  bool insecure_plaintext = false; // no CURVE at all (loopback, or a trusted network)
  int max_message_bytes = 16 << 20;
};

// A set-up failure; key() is the config key to blame: agents.listen, agents.server_key,
// agents.allow or agents.insecure_plaintext.
class AgentLinkError : public std::runtime_error {
 public:
  AgentLinkError(std::string key, const std::string& what)
      : std::runtime_error(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Binds the bridge. Throws AgentLinkError.
std::shared_ptr<ZmqBridge> open_agent_link(const AgentLinkOptions& options);

}  // namespace palladium
