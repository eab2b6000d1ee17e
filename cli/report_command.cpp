// `palladium report DB [--run ID] [--format text|json]`
#include "cli/commands.hpp"

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/run_config.hpp"
#include "store/run_report.hpp"

namespace po = boost::program_options;

namespace palladium {

int report_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium report DB [options]");
  std::string db, format = "text";
  int64_t run_id = 0;
  opts.add_options()("help,h", "show this help")("run", po::value(&run_id),
                                                 "run id (default: the latest run in DB)")(
      "format", po::value(&format), "text or json");
  po::options_description hidden;
  hidden.add_options()("db", po::value(&db));
  po::positional_options_description pos;
  pos.add("db", 1);
  po::options_description all;
  all.add(opts).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || db.empty()) {
    std::cout << opts << "\n";
    return vm.count("help") ? 0 : 2;
  }
  if (format != "text" && format != "json") {
    std::cerr << "palladium report: --format must be text or json, not '" << format << "'\n";
    return 2;
  }
  if (!std::filesystem::exists(db)) {
    std::cerr << "palladium report: " << db << ": no such database\n";
    return 2;
  }
  try {
    auto store = RunStore::open(db);
    if (run_id == 0) {
      auto latest = store->latest_run_id();
      if (!latest) {
        std::cerr << "palladium report: " << db << ": holds no runs\n";
        return 1;
      }
      run_id = *latest;
    }
    auto run = store->find_run(run_id);
    if (!run) {
      std::cerr << "palladium report: " << db << ": no run " << run_id << "\n";
      return 2;
    }
    // The config's workload list, so workloads without a single candidate
    // still count in the suite metrics (as 1.0x and unsolved).
    std::vector<std::string> workloads;
    try {
      workloads = parse_run_config(run->config_text, db + " (stored config)").workloads;
    } catch (const ConfigError&) {
      // An unreadable stored config falls back to the workloads with candidates.
    }
    auto sensitivity =
        load_input_sensitivity(palladium_home() / "workloads" / "input_sensitivity.json");
    if (format == "json")
      std::cout << report_json(*store, run_id, workloads, sensitivity).dump(2) << "\n";
    else
      std::cout << report_text(*store, run_id, workloads, sensitivity);
  } catch (const std::exception& e) {
    std::cerr << "palladium report: " << db << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace palladium
