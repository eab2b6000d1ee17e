#include "report/sweep_report_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "analysis/paired_comparison.hpp"

namespace palladium {

const char* const kComparisonDefinitions =
    "Paired comparison A - B over the workloads both ran: speed = difference of the geomean over "
    "workloads and seeds of max(speedup(w), 1); IQM = difference of the interquartile mean of "
    "max(speedup, 1) over all (workload, seed) runs; solved = difference in workloads solved per "
    "seed; correctness = difference in pooled per-sample correctness. [low, high]: 95% "
    "stratified bootstrap interval (seeds resampled within each workload, the same draw for A "
    "and B when they ran the same seeds). P(A>B): rliable's probability of improvement, the "
    "chance that a random run of A is faster than a random run of B on the same workload (ties "
    "count 1/2), averaged over workloads; 0.5 = no difference.";

namespace {

using ordered = nlohmann::ordered_json;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool is_seed_axis(const std::string& axis) { return axis == "seed" || axis == "seeds"; }

std::vector<std::pair<std::string, std::string>> parse_spec(const std::string& spec) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string part = spec.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size())
      throw std::invalid_argument("cell spec '" + spec + "': '" + part +
                                  "' is not axis=value (e.g. method=iterative,budget_per_workload=4)");
    if (!is_seed_axis(part.substr(0, eq))) pairs.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return pairs;
}

bool holds(const ReportCondition& c, const std::string& axis, const std::string& value) {
  for (const auto& [k, v] : c.params)
    if (k == axis) return v == value;
  return axis == "method" && c.method == value;
}

ordered difference_json(const Difference& d) {
  return {{"a", d.a}, {"b", d.b}, {"diff", d.diff}, {"low", d.low}, {"high", d.high}};
}

std::string signed_text(double v, const char* f) {
  return (v > 0 ? "+" : "") + fmt(f, v);
}

std::string interval(double low, double high, const char* f) {
  return "[" + fmt(f, low) + ", " + fmt(f, high) + "]";
}

std::string reading(const ordered& c) {
  const std::string a = c["a"], b = c["b"];
  const auto& g = c["geomean_speedup"];
  double diff = g["diff"].get<double>();
  std::string s = a + (diff > 0 ? " is ahead of " : diff < 0 ? " is behind " : " is level with ") +
                  b + " on speed";
  if (diff != 0) s += " by " + fmt("%.2fx", std::abs(diff));
  s += " " + interval(g["low"].get<double>(), g["high"].get<double>(), "%+.2f") +
       ", P(A>B) = " + fmt("%.2f", c["p_improvement"]["value"].get<double>());
  const auto& sv = c["solved"];
  s += "; solved " + signed_text(sv["diff"].get<double>(), "%.2f") + " " +
       interval(sv["low"].get<double>(), sv["high"].get<double>(), "%+.2f") + " workloads";
  const auto& pc = c["per_sample_correctness"];
  s += "; per-sample correctness " + signed_text(100 * pc["diff"].get<double>(), "%.1f") +
       " points " + interval(100 * pc["low"].get<double>(), 100 * pc["high"].get<double>(), "%+.1f") +
       ".";
  return s;
}

}  // namespace

const ReportCondition& find_condition(const std::vector<ReportCondition>& conditions,
                                      const std::string& spec) {
  std::vector<const ReportCondition*> hits;
  for (const auto& c : conditions)
    if (c.key == spec) return c;
  auto pairs = parse_spec(spec);
  for (const auto& c : conditions) {
    bool all = true;
    for (const auto& [k, v] : pairs) all = all && holds(c, k, v);
    if (all) hits.push_back(&c);
  }
  if (hits.size() == 1) return *hits.front();
  std::string known;
  for (const auto& c : conditions) known += (known.empty() ? "" : "; ") + c.key;
  throw std::invalid_argument("cell spec '" + spec + "' matches " +
                              (hits.empty() ? std::string("no condition")
                                            : std::to_string(hits.size()) + " conditions") +
                              " (name one of: " + known + ")");
}

ordered paired_comparison_json(const ReportCondition& a, const ReportCondition& b,
                               const std::string& axis, int resamples) {
  if (a.timing != b.timing)
    throw std::invalid_argument(a.label + " is timed " + a.timing + " and " + b.label + " " +
                                b.timing + ": speedups of different timing kinds are never compared");
  auto ta = condition_trajectories(a), tb = condition_trajectories(b);
  if (ta.empty() || tb.empty())
    throw std::invalid_argument("no evaluated candidate in " + (ta.empty() ? a.label : b.label));
  auto p = compare_paired(score_grid(ta), score_grid(tb), 0.95, resamples);
  ordered c = {{"a", a.label},
               {"b", b.label},
               {"axis", axis},
               {"timing", a.timing},
               {"model_a", a.model},
               {"model_b", b.model},
               {"workloads", p.workloads},
               {"seeds_a", p.seeds_a},
               {"seeds_b", p.seeds_b},
               {"paired", p.paired},
               {"few_seeds", p.few_seeds()},
               {"resamples", p.resamples},
               {"level", p.level},
               {"per_sample_correctness", difference_json(p.correctness)},
               {"solved", difference_json(p.solved)},
               {"geomean_speedup", difference_json(p.geomean_speedup)},
               {"iqm_speedup", difference_json(p.iqm_speedup)},
               {"p_improvement",
                {{"value", p.p_improvement.value},
                 {"low", p.p_improvement.low},
                 {"high", p.p_improvement.high}}}};
  c["reading"] = reading(c);
  std::string warning;
  if (p.few_seeds())
    warning = "Only " + std::to_string(std::min(p.seeds_a, p.seeds_b)) +
              " seed(s) per workload (fewer than " + std::to_string(kFewSeeds) +
              "): the interval rests on too few runs to mean much.";
  if (!p.paired)
    warning += std::string(warning.empty() ? "" : " ") +
               "A and B ran different seeds, so runs are resampled unpaired.";
  c["warning"] = warning;
  return c;
}

ordered axis_comparisons(const std::vector<ReportCondition>& conditions) {
  ordered out = ordered::array();
  for (size_t j = 0; j < conditions.size(); ++j)
    for (size_t i = 0; i < j; ++i) {
      const auto &a = conditions[j], &b = conditions[i];
      if (a.params.size() != b.params.size() || a.params.empty()) continue;
      std::string axis;
      int differ = 0;
      for (const auto& [k, v] : a.params)
        if (!holds(b, k, v)) {
          ++differ;
          axis = k;
        }
      if (differ != 1) continue;
      try {
        out.push_back(paired_comparison_json(a, b, axis));
      } catch (const std::invalid_argument&) {
        // A condition with nothing evaluated has nothing to compare; its cells say why.
      }
    }
  return out;
}

std::string comparison_text(const ordered& c) {
  std::string s = c["reading"].get<std::string>() + "\n";
  if (!c["warning"].get<std::string>().empty()) s += "Warning: " + c["warning"].get<std::string>() + "\n";
  s += "\n" + std::to_string(c["workloads"].size()) + " workloads; seeds: A " +
       std::to_string(c["seeds_a"].get<int>()) + ", B " + std::to_string(c["seeds_b"].get<int>()) +
       (c["paired"].get<bool>() ? " (paired)" : " (unpaired)") + "; " +
       std::to_string(c["resamples"].get<int>()) + " bootstrap resamples. Models: A " +
       c["model_a"].get<std::string>() + ", B " + c["model_b"].get<std::string>() + ". Timing: " +
       c["timing"].get<std::string>() +
       (c["timing"] == "cpu-wall" ? " (speedups are CPU interpret-mode wall-clock ratios, NOT TPU "
                                    "speedups)"
                                  : "") +
       ".\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %10s %10s %10s %22s\n", "metric", "A", "B", "A - B",
                "95% interval");
  s += line;
  auto row = [&](const char* name, const ordered& d, double scale) {
    std::snprintf(line, sizeof line, "%-24s %10.4f %10.4f %+10.4f   [%+.4f, %+.4f]\n", name,
                  scale * d["a"].get<double>(), scale * d["b"].get<double>(),
                  scale * d["diff"].get<double>(), scale * d["low"].get<double>(),
                  scale * d["high"].get<double>());
    s += line;
  };
  row("geomean speedup", c["geomean_speedup"], 1);
  row("IQM speedup", c["iqm_speedup"], 1);
  row("solved (workloads)", c["solved"], 1);
  row("correctness (%)", c["per_sample_correctness"], 100);
  const auto& p = c["p_improvement"];
  std::snprintf(line, sizeof line, "%-24s %10.4f %21s   [%.4f, %.4f]\n", "P(A>B) on speed",
                p["value"].get<double>(), "", p["low"].get<double>(), p["high"].get<double>());
  s += line;
  s += "\n" + std::string(kComparisonDefinitions) + "\n";
  return s;
}

}  // namespace palladium
