// CommandLine: the argument parsing every palladium subcommand shares.
//
// Rules (issue 8 item 5): --help prints the usage to stdout and succeeds; a
// missing positional argument or required option is named on stderr
// ("palladium run: missing CONFIG"), followed by the usage, also on stderr,
// and is a usage error (exit status 2). Unknown or malformed options throw
// boost::program_options::error, which main() reports the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace palladium {

struct Positional {
  std::string name;         // the variable, e.g. "config"
  std::string shown;        // in messages, e.g. "CONFIG"
  bool required = true;
};

// Parses `args` for `command` into `vm`. Returns an exit status when the
// command must stop here (0 after --help, 2 after a missing argument), or
// nullopt to go on. `visible` must hold a "help,h" switch; `required_options`
// are long option names that must be given (e.g. "workload").
std::optional<int> parse_command_line(const std::string& command,
                                      const std::vector<std::string>& args,
                                      const boost::program_options::options_description& visible,
                                      const std::vector<Positional>& positionals,
                                      boost::program_options::variables_map& vm,
                                      const std::vector<std::string>& required_options = {});

}  // namespace palladium
