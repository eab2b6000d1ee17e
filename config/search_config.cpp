#include "config/search_config.hpp"

#include <algorithm>

namespace palladium {
namespace {

void parse_budget(const ConfigReader& r, const YAML::Node& b, SearchConfig& c) {
  if (!b) return;
  r.check_keys(b, "budget",
               {"counts", "phase_policy", "translate_fraction", "seeds", "max_translate_fraction",
                "early_stop", "global"});
  std::string counts = "candidates";
  r.get(b, "counts", "budget.counts", counts);
  auto parsed = budget_counts_from_string(counts);
  if (!parsed) r.fail("budget.counts", "must be 'candidates' or 'calls', not '" + counts + "'");
  c.method_config.counts = *parsed;

  PhasePolicyConfig& p = c.method_config.autocomp.policy;
  std::string policy = "fixed_fraction";
  r.get(b, "phase_policy", "budget.phase_policy", policy);
  if (policy == "fixed_fraction") {
    p.kind = PhasePolicyConfig::fixed_fraction;
  } else if (policy == "adaptive") {
    p.kind = PhasePolicyConfig::adaptive;
  } else {
    r.fail("budget.phase_policy", "must be 'fixed_fraction' or 'adaptive', not '" + policy + "'");
  }
  r.get_number(b, "translate_fraction", "budget.translate_fraction", p.translate_fraction, 0.0,
               1.0);
  r.get_int(b, "seeds", "budget.seeds", p.seeds, 1, 1000);
  r.get_number(b, "max_translate_fraction", "budget.max_translate_fraction",
               p.max_translate_fraction, 0.0, 1.0);
  if (auto es = b["early_stop"]) {
    r.check_keys(es, "budget.early_stop", {"window", "threshold"});
    EarlyStopRule& e = c.method_config.early_stop;
    r.get_int(es, "window", "budget.early_stop.window", e.window, 0, 100000);
    r.get_number(es, "threshold", "budget.early_stop.threshold", e.threshold, 0.0, 1e6);
  }
  if (auto g = b["global"]) {
    r.check_keys(g, "budget.global",
                 {"enabled", "initial_fraction", "hopeless_after", "saturation_window", "chunk"});
    r.get(g, "enabled", "budget.global.enabled", c.global_enabled);
    r.get_number(g, "initial_fraction", "budget.global.initial_fraction",
                 c.global.initial_fraction, 0.0, 1.0);
    r.get_int(g, "hopeless_after", "budget.global.hopeless_after", c.global.hopeless_after, 0,
              10000000);
    r.get_int(g, "saturation_window", "budget.global.saturation_window",
              c.global.saturation_window, 0, 10000000);
    r.get_int(g, "chunk", "budget.global.chunk", c.global.chunk, 0, 10000000);
  }
}

void parse_autocomp(const ConfigReader& r, const YAML::Node& a, SearchConfig& c) {
  if (!a) return;
  r.check_keys(a, "autocomp",
               {"beam", "plans", "codes", "menu_keep", "menu_one_shot", "menu_new_strategies",
                "translate_score", "translate_exit_score", "translate_drop_root",
                "translate_perf_threshold", "keep_factor_early", "keep_factor_early_generations",
                "keep_factor", "dedup_level", "repair", "context", "translate_menu",
                "optimise_menu"});
  AutocompConfig& x = c.method_config.autocomp;
  r.get_int(a, "beam", "autocomp.beam", x.beam_size, 1, 1000);
  r.get_int(a, "plans", "autocomp.plans", x.plans_per_parent, 1, 1000);
  r.get_int(a, "codes", "autocomp.codes", x.codes_per_plan, 1, 1000);
  r.get_number(a, "menu_keep", "autocomp.menu_keep", x.menu_keep, 0.0, 1.0);
  r.get(a, "menu_one_shot", "autocomp.menu_one_shot", x.menu_one_shot);
  r.get_int(a, "menu_new_strategies", "autocomp.menu_new_strategies", x.menu_new_strategies, 1,
            1000);
  r.get(a, "translate_score", "autocomp.translate_score", x.translate_score);
  r.get_number(a, "translate_exit_score", "autocomp.translate_exit_score",
               x.translate_exit_score, 0.0, 11.0);
  r.get(a, "translate_drop_root", "autocomp.translate_drop_root", x.translate_drop_root);
  r.get_number(a, "translate_perf_threshold", "autocomp.translate_perf_threshold",
               x.translate_perf_threshold, 0.0, 1e6);
  r.get_number(a, "keep_factor_early", "autocomp.keep_factor_early", x.early_keep_factor, 0.0,
               1e6);
  r.get_int(a, "keep_factor_early_generations", "autocomp.keep_factor_early_generations",
            x.early_keep_generations, 0, 100000);
  r.get_number(a, "keep_factor", "autocomp.keep_factor", x.keep_factor, 0.0, 1e6);
  r.get_int(a, "dedup_level", "autocomp.dedup_level", x.dedup_level, -1, 2);
  r.get(a, "repair", "autocomp.repair", x.repair);
  r.get(a, "context", "autocomp.context", x.with_context);
  r.get(a, "translate_menu", "autocomp.translate_menu", c.translate_menu);
  r.get(a, "optimise_menu", "autocomp.optimise_menu", c.optimise_menu);
  for (const auto* m : {&c.translate_menu, &c.optimise_menu}) {
    if (m->empty() || m->find('/') != std::string::npos || *m == "." || *m == "..") {
      r.fail(m == &c.translate_menu ? "autocomp.translate_menu" : "autocomp.optimise_menu",
             "must be a file stem under workloads/context/menus/, not '" + *m + "'");
    }
  }
}

}  // namespace

const std::set<std::string>& search_config_keys() {
  static const std::set<std::string> keys{
      "method", "budget_per_workload", "budget", "autocomp", "pipeline",
  };
  return keys;
}

SearchConfig parse_search_config(const ConfigReader& r, const YAML::Node& root) {
  SearchConfig c;
  r.get(root, "method", "method", c.method);
  // An upper bound keeps budget arithmetic (samples x workloads x seeds) in int range.
  r.get_int(root, "budget_per_workload", "budget_per_workload", c.budget_per_workload, 1, 100000);
  const auto& names = method_names();
  if (std::find(names.begin(), names.end(), c.method) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    r.fail("method", "'" + c.method + "' is not a method (available: " + known + ")");
  }
  c.method_config.method = c.method;
  parse_budget(r, root["budget"], c);
  parse_autocomp(r, root["autocomp"], c);
  if (root["autocomp"] && c.method != "autocomp") {
    r.fail("autocomp", "is set but method is '" + c.method + "'");
  }
  if (auto p = root["pipeline"]) {
    r.check_keys(p, "pipeline", {"in_flight_per_slot"});
    r.get_int(p, "in_flight_per_slot", "pipeline.in_flight_per_slot", c.in_flight_per_slot, 1,
              1000);
  }
  return c;
}

}  // namespace palladium
