// Options of `palladium agent` (see agent/agent.hpp). Empty strings mean "use the
// default"; with_defaults() fills them in.

#ifndef PALLADIUM_AGENT_AGENT_OPTIONS_HPP_
#define PALLADIUM_AGENT_AGENT_OPTIONS_HPP_

#include <string>

namespace palladium::agent {

struct AgentOptions {
  std::string connect_endpoint;            // the coordinator's ROUTER, e.g. tcp://host:5555
  std::string backend = "interpret";       // "interpret" | "tpu"
  int slots = 1;                           // judge processes = concurrent jobs, >= 1
  std::string agent_id;                    // default "<hostname>-<pid>"
  std::string python;                      // default $PALLADIUM_PYTHON or <home>/.venv/bin/python
  std::string home;                        // default $PALLADIUM_HOME or PALLADIUM_SOURCE_DIR
  int heartbeat_ms = 500;                  // heartbeat interval, both directions
  int liveness = 4;                        // silent intervals before the coordinator is dead
  std::string log_dir;                     // judge logs; default <tmp>/palladium-agent-<id>
  std::string judge_module = "judge";  // `python -m <this>`; tests use a fake
  int judge_start_timeout_ms = 120000;   // spawn -> `ready` (importing JAX is slow)
  int reconnect_max_ms = 32000;            // cap of the reconnect backoff (starts at heartbeat_ms)
  // The authenticated link (agent/coordinator_link.hpp). server_key is the coordinator's
  // public key, as Z85 text or a certificate file; the agent's own key pair comes from a
  // secret certificate file (mode 0600) or, for agents the coordinator starts itself, from an
  // inherited pipe (key_fd: one line with the Z85 secret key), so no key is on a command line
  // or in the environment. Without server_key the link is plaintext, which the agent refuses
  // beyond loopback unless insecure_plaintext is set.
  std::string server_key;
  std::string key_file;
  int key_fd = -1;
  bool insecure_plaintext = false;
};

// Returns `options` with every defaulted field filled in (see the comments above).
AgentOptions with_defaults(AgentOptions options);

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_AGENT_OPTIONS_HPP_
