// `palladium plan CONFIG|SWEEP [flags]`: before anything is spent, the calls, tokens, dollars
// and wall time of a run config or sweep, and the binding limit (coordinator/spend_plan.hpp says
// how, and what each flag assumes).
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "coordinator/spend_plan.hpp"

namespace palladium {
namespace {

constexpr const char* kUsage =
    "usage: palladium plan CONFIG|SWEEP [--chips N] [--tier-limits LIST] [--latency-s S]\n"
    "                      [--eval-s S] [--startup-s S] [--cached-share F] [--output-tokens N]\n"
    "  --tier-limits  comma-separated rpm=, tpm=, usd_per_window=, window_s=, concurrency=,\n"
    "                 or gemini-tier1 (1000 rpm, 1M tpm, $10 per 600 s) / gemini-tier2\n"
    "                 (2000 rpm, 3M tpm, $200 per 600 s); default: the config's llm limits\n";

}  // namespace

int plan_command(const std::vector<std::string>& args) {
  PlanRequest r;
  std::string& path = r.path;
  PlanAssumptions& a = r.assumptions;
  // Every bad flag is named with what it needs and what it got.
  auto bad = [](const std::string& flag, const std::string& needs, const std::string& got) {
    std::cerr << "palladium plan: " << flag << " needs " << needs
              << (got.empty() ? std::string(", got nothing") : ", got '" + got + "'") << "\n"
              << kUsage;
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    const std::string got = i + 1 < args.size() ? args[i + 1] : "";
    double v = 0;
    auto number = [&](double min, double max) {
      ++i;
      return parse_plan_number(got, v) && v >= min && v <= max;
    };
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (flag == "--chips") {
      if (!number(1, 1e9)) return bad(flag, "a whole number >= 1", got);
      r.chips = static_cast<int>(v);
    } else if (flag == "--tier-limits") {
      if (got.empty()) return bad(flag, "a list such as rpm=60,usd_per_window=1", got);
      r.tiers = args[++i];
    } else if (flag == "--latency-s") {
      if (!number(0, 1e9)) return bad(flag, "seconds >= 0", got);
      a.latency_s = v;
    } else if (flag == "--eval-s") {
      if (!number(0, 1e9)) return bad(flag, "seconds >= 0", got);
      a.eval_s = v;
    } else if (flag == "--startup-s") {
      if (!number(0, 1e9)) return bad(flag, "seconds >= 0", got);
      a.startup_s = v;
    } else if (flag == "--output-tokens") {
      if (!number(0, 1e12)) return bad(flag, "tokens >= 0", got);
      r.output_per_call = v;
    } else if (flag == "--cached-share") {
      if (!number(0, 1)) return bad(flag, "a share in [0, 1]", got);
      r.cached_share = v;
    } else if (path.empty() && flag.rfind("--", 0) != 0) {
      path = flag;
    } else {
      std::cerr << "palladium plan: unexpected argument '" << flag << "'\n" << kUsage;
      return 2;
    }
  }
  if (path.empty()) return std::cerr << "palladium plan: CONFIG or SWEEP is required\n" << kUsage, 2;
  try {
    std::cout << spend_plan_text(r, palladium_home());
  } catch (const PlanError& e) {
    std::cerr << "palladium plan: " << e.what() << "\n";
    return e.exit_code();
  }
  return 0;
}

}  // namespace palladium
