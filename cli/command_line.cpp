#include "cli/command_line.hpp"

#include <iostream>

namespace po = boost::program_options;

namespace palladium {

std::optional<int> parse_command_line(const std::string& command,
                                      const std::vector<std::string>& args,
                                      const po::options_description& visible,
                                      const std::vector<Positional>& positionals,
                                      po::variables_map& vm,
                                      const std::vector<std::string>& required_options) {
  po::options_description hidden;
  po::positional_options_description pos;
  for (const auto& p : positionals) {
    hidden.add_options()(p.name.c_str(), po::value<std::string>());
    pos.add(p.name.c_str(), 1);
  }
  po::options_description all;
  all.add(visible).add(hidden);
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << visible << "\n";
    return 0;
  }
  std::vector<std::string> missing;
  for (const auto& p : positionals)
    if (p.required && !vm.count(p.name)) missing.push_back(p.shown);
  for (const auto& o : required_options)
    if (!vm.count(o)) missing.push_back("--" + o);
  if (missing.empty()) return std::nullopt;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  std::cerr << "palladium " << command << ": missing " << list << "\n\n" << visible << "\n";
  return 2;
}

}  // namespace palladium
