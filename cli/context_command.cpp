// `palladium context WORKLOAD [--blocks a,b] [--sizes]`: the context blocks a
// prompt of the iterative + context method carries for one workload, or only
// their sizes.
#include "cli/commands.hpp"

#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "llm/context_blocks.hpp"

namespace po = boost::program_options;

namespace palladium {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int context_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium context WORKLOAD [options]");
  std::string workload, blocks = "hardware,api,examples,rules";
  bool sizes_only = false;
  opts.add_options()("help,h", "show this help")(
      "blocks", po::value(&blocks), "comma-separated blocks (default: all four)")(
      "sizes", po::bool_switch(&sizes_only), "print only each block's files and token size");
  po::options_description hidden;
  hidden.add_options()("workload", po::value(&workload));
  po::positional_options_description pos;
  pos.add("workload", 1);
  po::options_description all;
  all.add(opts).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || workload.empty()) {
    std::cout << opts << "\nTokens are estimated as ceil(bytes / 4).\n";
    return vm.count("help") ? 0 : 2;
  }
  try {
    auto lib = ContextLibrary::load(palladium_home() / "workloads" / "context");
    auto ctx = lib.assemble(workload, split_commas(blocks));
    if (!sizes_only) {
      std::cout << ctx.text;
      return 0;
    }
    for (const auto& b : ctx.blocks) {
      std::cout << b.name << "\t" << b.tokens << " tokens\t";
      for (size_t i = 0; i < b.files.size(); ++i) std::cout << (i ? " " : "") << b.files[i];
      std::cout << "\n";
    }
    std::cout << "total\t" << ctx.tokens() << " tokens (estimated: ceil(bytes / 4))\n";
  } catch (const ContextError& e) {
    std::cerr << "palladium context: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace palladium
