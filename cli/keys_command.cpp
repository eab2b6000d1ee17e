// `palladium keys new NAME [--dir DIR]` and `palladium keys public FILE`: CURVE key pairs for
// the authenticated coordinator <-> agent link (protocol/curve_keys.hpp).
//
//   palladium keys new coordinator --dir keys     # keys/coordinator.key + .key_secret (0600)
//   palladium keys new tpu-vm-3 --dir keys/agents # an agent's pair; the .key joins the allowlist
//   palladium keys public keys/coordinator.key    # prints the Z85 public key
#include "cli/commands.hpp"

#include <iostream>

#include <boost/program_options.hpp>

#include "protocol/curve_keys.hpp"

namespace po = boost::program_options;

namespace palladium {

namespace {

constexpr const char* kKeysUsage = R"(usage:
  palladium keys new NAME [--dir DIR]   write DIR/NAME.key (public, 0644) and DIR/NAME.key_secret
                                        (secret, 0600); DIR defaults to ".", made 0700 if new
  palladium keys public FILE            print the public key of a .key or .key_secret file

The coordinator takes its .key_secret with --server-key and the agents' .key files (a
directory or a file of keys) with --allow; an agent takes the coordinator's .key with
--server-key and its own .key_secret with --key.
)";

}  // namespace

int keys_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << kKeysUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string& verb = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h")) {  // keys new --help
    std::cout << kKeysUsage;
    return 0;
  }
  try {
    if (verb == "new") {
      std::string name, dir = ".";
      po::options_description opts("palladium keys new NAME");
      opts.add_options()("dir", po::value(&dir), "directory for the key files");
      po::options_description hidden;
      hidden.add_options()("name", po::value(&name));
      po::positional_options_description pos;
      pos.add("name", 1);
      po::options_description all;
      all.add(opts).add(hidden);
      po::variables_map vm;
      po::store(po::command_line_parser(rest).options(all).positional(pos).run(), vm);
      po::notify(vm);
      if (name.empty()) {
        std::cerr << "palladium keys new: missing NAME\n" << kKeysUsage;
        return 2;
      }
      keys::KeyPair pair = keys::generate();
      std::string secret = keys::write_pair(dir, name, pair);
      std::cout << pair.public_key << "\n";
      std::cerr << "wrote " << dir << "/" << name << ".key (public) and " << secret
                << " (secret, mode 0600)\n";
      return 0;
    }
    if (verb == "public") {
      if (rest.size() != 1) {
        std::cerr << "palladium keys public: want exactly one FILE\n" << kKeysUsage;
        return 2;
      }
      std::cout << keys::read_certificate(rest[0], false).public_key << "\n";
      return 0;
    }
  } catch (const keys::KeyError& e) {
    std::cerr << "palladium keys " << verb << ": " << e.what() << "\n";
    return 2;
  }
  std::cerr << "palladium keys: unknown action '" << verb << "'\n" << kKeysUsage;
  return 2;
}

}  // namespace palladium
