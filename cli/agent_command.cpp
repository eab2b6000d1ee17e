// `palladium agent --connect tcp://HOST:PORT [--backend interpret|tpu] [--slots K]
//  [--server-key KEY --key FILE.key_secret | --insecure-plaintext]`
#include "cli/commands.hpp"

#include <iostream>

#include <boost/program_options.hpp>

#include "agent/agent.hpp"

namespace po = boost::program_options;

namespace palladium {

int agent_command(const std::vector<std::string>& args) {
  agent::AgentOptions o;
  po::options_description opts("palladium agent --connect tcp://HOST:PORT [options]");
  opts.add_options()("help,h", "show this help")(
      "connect", po::value(&o.connect_endpoint), "coordinator endpoint")(
      "backend", po::value(&o.backend)->default_value(o.backend),
      "interpret (Pallas TPU interpret mode on CPU) or tpu (refuses to start without a TPU)")(
      "slots", po::value(&o.slots)->default_value(o.slots), "judge processes (candidates at once)")(
      "agent-id", po::value(&o.agent_id), "name shown to the coordinator (default host-pid)")(
      "python", po::value(&o.python), "Python for judges (default .venv/bin/python)")(
      "heartbeat-ms", po::value(&o.heartbeat_ms)->default_value(o.heartbeat_ms), "heartbeat interval")(
      "liveness", po::value(&o.liveness)->default_value(o.liveness),
      "missed heartbeats before the coordinator counts as gone")(
      "log-dir", po::value(&o.log_dir), "directory for judge logs (default: a temp dir)")(
      "server-key", po::value(&o.server_key),
      "the coordinator's public key: Z85 text or its .key file (enables CURVE)")(
      "key", po::value(&o.key_file), "this agent's secret certificate (.key_secret, mode 0600)")(
      "key-fd", po::value(&o.key_fd), "read this agent's secret key from an inherited fd")(
      "insecure-plaintext", po::bool_switch(&o.insecure_plaintext),
      "allow an unauthenticated, unencrypted link beyond loopback (trusted networks only)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help") || o.connect_endpoint.empty()) {
    std::cout << opts << "\n";
    return vm.count("help") ? 0 : 2;
  }
  if (o.backend != "interpret" && o.backend != "tpu") {
    std::cerr << "palladium agent: --backend must be interpret or tpu, not '" << o.backend << "'\n";
    return 2;
  }
  if (o.slots < 1) {
    std::cerr << "palladium agent: --slots must be >= 1\n";
    return 2;
  }
  if (o.home.empty()) o.home = palladium_home().string();
  return agent::run_agent(o);
}

}  // namespace palladium
