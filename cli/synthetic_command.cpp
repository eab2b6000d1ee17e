// `palladium synthetic ...`: look inside the offline synthetic model.
//
//   palladium synthetic workloads
//       the workloads that have a kernel family
//   palladium synthetic variants WORKLOAD [--all-tilings]
//       one JSON object per line, {"workload","template","params","mistakes","code"}: each
//       template at its first-attempt tilings, clean, and with each of its mistakes alone at
//       the smallest first-attempt tiling; --all-tilings adds every clean tiling
//   palladium synthetic answer WORKLOAD --role ROLE [--system FILE] [--user FILE]
//                              [--seed N] [--sample N]
//       the answer the model gives to that prompt
#include "cli/commands.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "llm/synthetic_family.hpp"
#include "llm/synthetic_model.hpp"

namespace po = boost::program_options;

namespace palladium {
namespace {

std::filesystem::path synthetic_dir() { return palladium_home() / "llm" / "synthetic"; }

void print_variant(const KernelFamily& fam, const Variant& v) {
  nlohmann::json j;
  j["workload"] = fam.workload();
  j["template"] = v.tmpl;
  j["params"] = v.params;
  j["mistakes"] = v.mistakes;
  j["code"] = fam.render(v);
  std::cout << j.dump() << "\n";
}

int variants(const std::string& workload, bool all_tilings) {
  KernelFamily fam = KernelFamily::load(synthetic_dir(), workload);
  for (const auto& v : listed_variants(fam, all_tilings)) print_variant(fam, v);
  return 0;
}

std::string read_or_empty(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int synthetic_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium synthetic workloads|variants|answer [WORKLOAD] [options]");
  std::string action, workload, role = "code", system_file, user_file;
  uint64_t seed = 0;
  int sample = 0;
  bool all_tilings = false;
  opts.add_options()("help,h", "show this help")("role", po::value(&role),
                                                 "code, plan, score, repair or menu (answer)")(
      "system", po::value(&system_file), "file with the system prompt (answer)")(
      "user", po::value(&user_file), "file with the user prompt (answer)")(
      "seed", po::value(&seed), "search seed (answer)")("sample", po::value(&sample),
                                                        "sample index (answer)")(
      "all-tilings", po::bool_switch(&all_tilings), "every clean tiling (variants)");
  po::options_description hidden;
  hidden.add_options()("action", po::value(&action))("workload", po::value(&workload));
  po::positional_options_description pos;
  pos.add("action", 1).add("workload", 1);
  po::options_description all;
  all.add(opts).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || action.empty()) {
    std::cout << opts << "\n";
    return vm.count("help") ? 0 : 2;
  }
  try {
    if (action == "workloads") {
      for (const auto& w : synthetic_workloads(synthetic_dir())) std::cout << w << "\n";
      return 0;
    }
    if (workload.empty()) {
      std::cerr << "palladium synthetic " << action << ": name a workload\n";
      return 2;
    }
    if (action == "variants") return variants(workload, all_tilings);
    if (action == "answer") {
      auto parsed = sample_role_from_string(role);
      if (!parsed) {
        std::cerr << "palladium synthetic answer: unknown role '" << role << "'\n";
        return 2;
      }
      ChatRequest req;
      req.workload_id = workload;
      req.role = *parsed;
      req.seed = seed;
      req.sample_index = sample;
      req.system_prompt = read_or_empty(system_file);
      req.user_prompt = read_or_empty(user_file);
      SyntheticModel model(synthetic_dir());
      std::cout << model.answer(req).text;
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "palladium synthetic: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "palladium synthetic: unknown action '" << action << "'\n";
  return 2;
}

}  // namespace palladium
