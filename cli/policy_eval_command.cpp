// `palladium policy-eval DB --policy SPEC [--policy SPEC ...] [--sweep ID] [--json]`
//
// Estimates, from the trajectories a sweep recorded, what other budget
// policies would have achieved, with no LLM call and no evaluation
// (analysis/policy_replay.hpp). A SPEC with its budget ("prefix:4",
// "realloc:4,patience=1", "early-stop:2") is one point; a family without it
// ("prefix", "realloc", "realloc,patience=1") is the curve over every budget
// K from 1 to the longest recording.
#include "cli/commands.hpp"

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/command_line.hpp"
#include "report/report_input.hpp"
#include "report/policy_eval_report.hpp"

namespace po = boost::program_options;

namespace palladium {

int policy_eval_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium policy-eval DB --policy SPEC [options]");
  std::vector<std::string> specs;
  int64_t sweep_id = 0;
  bool json = false;
  opts.add_options()("help,h", "show this help")(
      "policy", po::value(&specs)->composing(),
      "prefix:K, early-stop:P, realloc:K[,patience=P][,give_up=G]; without K (prefix, realloc, "
      "realloc,patience=P) the curve over K; repeatable")(
      "sweep", po::value(&sweep_id), "sweep id (default: the latest, else every run)")(
      "json", po::bool_switch(&json), "print one JSON object");
  po::variables_map vm;
  if (auto stop = parse_command_line("policy-eval", args, opts, {{"db", "DB"}}, vm, {"policy"}))
    return *stop;
  const std::string db = vm["db"].as<std::string>();
  std::vector<PolicyRequest> requests;
  try {
    for (const auto& s : specs) requests.push_back(parse_policy_request(s));
  } catch (const std::invalid_argument& e) {
    std::cerr << "palladium policy-eval: --policy: " << e.what() << "\n";
    return 2;
  }
  if (!std::filesystem::exists(db)) {
    std::cerr << "palladium policy-eval: " << db << ": no such database\n";
    return 2;
  }

  SweepReportInput input;
  try {
    auto store = RunStore::open(db, RunStore::Mode::read_only);
    input = collect_report_input(*store, sweep_id ? std::optional<int64_t>(sweep_id) : std::nullopt,
                                 {});
  } catch (const std::exception& e) {
    std::cerr << "palladium policy-eval: " << db << ": " << e.what() << "\n";
    return 1;
  }

  auto report = policy_eval_report(db, input, requests);
  if (json)
    std::cout << report.json.dump(2) << "\n";
  else
    std::cout << report.text;
  return 0;
}

}  // namespace palladium
