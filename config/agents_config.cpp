#include "config/agents_config.hpp"

namespace palladium {

AgentsConfig parse_agents_config(const ConfigReader& r, const YAML::Node& node) {
  AgentsConfig c;
  if (!node) return c;
  r.check_keys(node, "agents", {"local", "slots_per_agent", "listen", "heartbeat_ms", "liveness",
                                "eval_heartbeat_max_ms", "server_key", "allow", "insecure_plaintext"});
  r.get_int(node, "local", "agents.local", c.local, 0, 256);
  r.get_int(node, "slots_per_agent", "agents.slots_per_agent", c.slots_per_agent, 1, 256);
  r.get(node, "listen", "agents.listen", c.listen);
  r.get_int(node, "heartbeat_ms", "agents.heartbeat_ms", c.heartbeat_ms, 10, 600000);
  r.get_int(node, "liveness", "agents.liveness", c.liveness, 2, 1000);
  r.get_int(node, "eval_heartbeat_max_ms", "agents.eval_heartbeat_max_ms",
            c.eval_heartbeat_max_ms, 0, 600000);
  r.get(node, "server_key", "agents.server_key", c.server_key);
  r.get(node, "allow", "agents.allow", c.allow);
  r.get(node, "insecure_plaintext", "agents.insecure_plaintext", c.insecure_plaintext);
  if (c.insecure_plaintext && (!c.server_key.empty() || !c.allow.empty()))
    r.fail("agents.insecure_plaintext", "cannot be combined with server_key or allow");
  if (c.listen.rfind("tcp://", 0) != 0) r.fail("agents.listen", "must be a tcp:// endpoint");
  return c;
}

void apply_overrides(const AgentsOverrides& o, AgentsConfig& c) {
  if (o.local >= 0) c.local = o.local;
  if (!o.listen.empty()) c.listen = o.listen;
  if (!o.server_key.empty()) c.server_key = o.server_key;
  if (!o.allow.empty()) c.allow = o.allow;
  if (o.insecure_plaintext) c.insecure_plaintext = true;
}

}  // namespace palladium
