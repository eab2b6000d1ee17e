// `palladium status DB [--live] [--json] [--sweep ID]`: a sweep's (or a run's)
// state while it runs or after: its cells with their progress against their
// sample budgets, tokens and dollars, the current best kernel per workload,
// and, while the coordinator is alive, its agents, their utilisation and the
// dispatch queue (from DB.status.json, coordinator/status_file.hpp).
//
// Reads the database read-only: safe next to a running sweep.
#include "cli/commands.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "coordinator/interrupt.hpp"
#include "report/report_input.hpp"
#include "coordinator/status_file.hpp"
#include "coordinator/status_report.hpp"

namespace po = boost::program_options;

namespace palladium {

int status_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium status DB [options]");
  bool live = false, json = false;
  int64_t sweep_id = 0;
  double every_s = 2.0;
  opts.add_options()("help,h", "show this help")(
      "live", po::bool_switch(&live), "refresh until the coordinator ends (Ctrl-C to leave)")(
      "every", po::value(&every_s)->default_value(every_s), "seconds between refreshes with --live")(
      "sweep", po::value(&sweep_id), "sweep id (default: the latest, else every run)")(
      "json", po::bool_switch(&json), "print one JSON object");
  po::variables_map vm;
  if (auto stop = parse_command_line("status", args, opts, {{"db", "DB"}}, vm)) return *stop;
  const std::string db = vm["db"].as<std::string>();
  if (!std::filesystem::exists(db)) {
    std::cerr << "palladium status: " << db << ": no such database\n";
    return 2;
  }
  if (!(every_s >= 0.2 && every_s <= 3600)) {
    std::cerr << "palladium status: --every must be between 0.2 and 3600 seconds\n";
    return 2;
  }
  if (live) install_interrupt_handlers();
  while (true) {
    std::optional<CoordinatorStatus> coordinator = read_status_file(status_file_path(db));
    if (coordinator && !status_is_live(*coordinator, unix_ms_now())) coordinator.reset();
    nlohmann::ordered_json s;
    try {
      auto store = RunStore::open(db, RunStore::Mode::read_only);
      auto input = collect_report_input(
          *store, sweep_id ? std::optional<int64_t>(sweep_id) : std::nullopt, {});
      s = status_json(db, input, coordinator);
    } catch (const std::exception& e) {
      std::cerr << "palladium status: " << db << ": " << e.what() << "\n";
      return 1;
    }
    if (json)
      std::cout << s.dump(2) << "\n";
    else
      std::cout << (live && isatty(STDOUT_FILENO) ? "\033[H\033[2J" : "") << status_text(s);
    std::cout.flush();
    if (!live || !coordinator || interrupt_signal()) break;
    for (double t = 0; t < every_s && !interrupt_signal(); t += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (interrupt_signal()) break;
  }
  return 0;
}

}  // namespace palladium
