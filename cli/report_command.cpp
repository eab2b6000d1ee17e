// `palladium report DB [--run ID] [--format text|json]`
#include "cli/commands.hpp"

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/command_line.hpp"
#include "report/report_files.hpp"
#include "report/report_input.hpp"
#include "config/run_config.hpp"
#include "report/run_report.hpp"

namespace po = boost::program_options;

namespace palladium {
namespace {

int print_sweep_report(const std::string& db, const std::string& out_dir, int64_t sweep_id,
                       bool plots) {
  try {
    for (const auto& f : write_sweep_report(
             db, sweep_id ? std::optional<int64_t>(sweep_id) : std::nullopt, out_dir,
             palladium_home(), plots))
      std::cout << f.string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "palladium report: " << db << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium report DB [options]");
  std::string db, format = "text", out_dir;
  int64_t run_id = 0, sweep_id = 0;
  bool no_plots = false;
  opts.add_options()("help,h", "show this help")("run", po::value(&run_id),
                                                 "run id (default: the latest run in DB)")(
      "format", po::value(&format), "text or json")(
      "out", po::value(&out_dir),
      "write the sweep report to DIR: Table 2, Table 3, Figure 4, budget curves, cells and best "
      "kernels as Markdown, CSV, JSON and PNG")(
      "sweep", po::value(&sweep_id), "with --out: the sweep (default: the latest, else every run)")(
      "no-plots", po::bool_switch(&no_plots), "with --out: skip the PNGs");
  po::variables_map vm;
  if (auto stop = parse_command_line("report", args, opts, {{"db", "DB"}}, vm)) return *stop;
  db = vm["db"].as<std::string>();
  if (format != "text" && format != "json") {
    std::cerr << "palladium report: --format must be text or json, not '" << format << "'\n";
    return 2;
  }
  if (!std::filesystem::exists(db)) {
    std::cerr << "palladium report: " << db << ": no such database\n";
    return 2;
  }
  if (!out_dir.empty()) return print_sweep_report(db, out_dir, sweep_id, !no_plots);
  try {
    // Read-only: a report never changes the file, and one that is not a
    // Palladium store is refused before anything is written to it.
    auto store = RunStore::open(db, RunStore::Mode::read_only);
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
    // still count in the suite metrics (as 1.0x and unsolved). Without it the
    // suite would silently shrink to the workloads that have candidates, so
    // an unreadable list is an error, not a fallback.
    std::vector<std::string> workloads;
    try {
      workloads = stored_suite(run->suite,
                               db + " (stored config of run " + std::to_string(run_id) + ")");
    } catch (const ConfigError& e) {
      std::cerr << "palladium report: " << e.what()
                << "; without the suite's workload list the suite metrics would be wrong\n";
      return 1;
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
