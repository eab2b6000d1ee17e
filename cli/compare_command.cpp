// `palladium compare DB --a CELLSPEC --b CELLSPEC [--sweep ID] [--format text|json]`
//
// A paired comparison of two conditions of a sweep (cells that differ only by
// their seed axis; report/sweep_report_compare.hpp): the differences in
// per-sample correctness, solved count, geomean and IQM speedup with 95%
// stratified bootstrap intervals, and the probability that A beats B.
#include "cli/commands.hpp"

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/command_line.hpp"
#include "report/report_input.hpp"
#include "report/sweep_report_compare.hpp"
#include "report/sweep_report_sittings.hpp"

namespace po = boost::program_options;

namespace palladium {

int compare_command(const std::vector<std::string>& args) {
  po::options_description opts("palladium compare DB --a CELLSPEC --b CELLSPEC [options]");
  std::string a_spec, b_spec, format = "text";
  int64_t sweep_id = 0;
  int resamples = 2000;
  opts.add_options()("help,h", "show this help")(
      "a", po::value(&a_spec),
      "condition A: axis=value pairs, comma-separated, e.g. method=iterative_context or "
      "method=iterative,budget_per_workload=4 (the seed axis is pooled)")(
      "b", po::value(&b_spec), "condition B, the same way")(
      "sweep", po::value(&sweep_id), "sweep id (default: the latest, else every run)")(
      "resamples", po::value(&resamples), "bootstrap resamples (default 2000)")(
      "format", po::value(&format), "text or json");
  po::variables_map vm;
  if (auto stop = parse_command_line("compare", args, opts, {{"db", "DB"}}, vm, {"a", "b"}))
    return *stop;
  const std::string db = vm["db"].as<std::string>();
  if (format != "text" && format != "json") {
    std::cerr << "palladium compare: --format must be text or json, not '" << format << "'\n";
    return 2;
  }
  if (resamples < 1) {
    std::cerr << "palladium compare: --resamples must be >= 1, not " << resamples << "\n";
    return 2;
  }
  if (!std::filesystem::exists(db)) {
    std::cerr << "palladium compare: " << db << ": no such database\n";
    return 2;
  }
  SweepReportInput input;
  try {
    auto store = RunStore::open(db, RunStore::Mode::read_only);
    input = collect_report_input(*store, sweep_id ? std::optional<int64_t>(sweep_id) : std::nullopt,
                                 {});
  } catch (const std::exception& e) {
    std::cerr << "palladium compare: " << db << ": " << e.what() << "\n";
    return 1;
  }
  // A re-timed search's best is its sitting's, as in the reports.
  input = with_published_bests(std::move(input));
  const auto conditions = report_conditions(input);
  try {
    const auto& a = find_condition(conditions, a_spec);
    const auto& b = find_condition(conditions, b_spec);
    if (&a == &b) {
      std::cerr << "palladium compare: --a and --b name the same condition (" << a.key << ")\n";
      return 2;
    }
    auto c = paired_comparison_json(a, b, "", resamples);
    if (format == "json")
      std::cout << c.dump(2) << "\n";
    else
      std::cout << "A = " << a.label << "\nB = " << b.label << "\n\n" << comparison_text(c);
  } catch (const std::invalid_argument& e) {
    std::cerr << "palladium compare: " << db << ": " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace palladium
