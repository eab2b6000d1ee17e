#include "report/policy_eval_report.hpp"

#include <algorithm>
#include <cstdio>

namespace palladium {
namespace {

nlohmann::ordered_json mi_json(const MeanInterval& m) {
  return {{"mean", m.mean}, {"low", m.low}, {"high", m.high}, {"n", m.n}};
}

nlohmann::ordered_json estimate_json(const PolicyEstimate& e) {
  nlohmann::ordered_json seeds = nlohmann::ordered_json::array();
  for (const auto& o : e.per_seed)
    seeds.push_back({{"seed", o.seed},
                     {"samples", o.samples},
                     {"solved", o.solved},
                     {"geomean_speedup", o.geomean_speedup},
                     {"per_sample_correctness", o.per_sample_correctness},
                     {"censored", o.censored}});
  return {{"policy", e.policy.text()},
          {"exact", e.exact},
          {"samples", mi_json(e.samples)},
          {"solved", mi_json(e.solved)},
          {"geomean_speedup", mi_json(e.geomean_speedup)},
          {"per_sample_correctness", mi_json(e.per_sample_correctness)},
          {"per_seed", seeds}};
}

std::string interval(const MeanInterval& m, const char* f) {
  char a[48], b[48], c[48];
  std::snprintf(a, sizeof a, f, m.mean);
  if (m.n <= 1) return a;
  std::snprintf(b, sizeof b, f, m.low);
  std::snprintf(c, sizeof c, f, m.high);
  return std::string(a) + " [" + b + ", " + c + "]";
}

}  // namespace

PolicyRequest parse_policy_request(const std::string& spec) {
  PolicyRequest r;
  r.spec = spec;
  if (spec.find(':') != std::string::npos) {
    r.policy = parse_replay_policy(spec);
    return r;
  }
  // A family: "realloc,patience=1" is "realloc:1,patience=1" with K varied.
  auto comma = spec.find(',');
  std::string kind = spec.substr(0, comma);
  std::string rest = comma == std::string::npos ? "" : spec.substr(comma);
  r.policy = parse_replay_policy(kind + ":1" + rest);
  r.curve = r.policy.kind != ReplayPolicy::early_stop;
  return r;
}

PolicyEvalReport policy_eval_report(const std::string& db, const SweepReportInput& input,
                                    const std::vector<PolicyRequest>& requests) {
  nlohmann::ordered_json out{{"database", db},
                             {"title", input.title},
                             {"note",
                              "Replay of recorded candidates, no new LLM call or evaluation. "
                              "Exact for prefix truncation and reallocation across workloads "
                              "when the method's k-th candidate does not depend on its budget "
                              "(iterative, iterative_context) and no workload is asked for more "
                              "candidates than were recorded (else 'censored': a lower bound). "
                              "Not estimable by replay: policies that change prompts, beams or "
                              "feedback, or Autocomp's budget-dependent phase split."},
                             {"conditions", nlohmann::ordered_json::array()}};
  std::string text;
  for (const auto& c : report_conditions(input)) {
    auto seeds = condition_trajectories(c);
    if (seeds.empty()) continue;
    int longest = 0;
    for (const auto& s : seeds)
      for (const auto& [w, steps] : s.by_workload) longest = std::max(longest, static_cast<int>(steps.size()));
    const bool method_exact = replay_is_exact_for_method(c.method);
    nlohmann::ordered_json cj{{"key", c.key},
                              {"method", c.method},
                              {"model", c.model},
                              {"timing", c.timing},
                              {"seeds", seeds.size()},
                              {"longest_recording", longest},
                              {"method_replay_exact", method_exact},
                              {"estimates", nlohmann::ordered_json::array()}};
    text += "\n" + c.label + "  (model " + c.model + ", timing " + c.timing + ", " +
            std::to_string(seeds.size()) + " seed(s), recordings up to " + std::to_string(longest) +
            " candidates per workload" +
            (method_exact ? ")\n"
                          : "; method " + c.method +
                                ": its k-th candidate depends on its budget, so these are "
                                "what the recorded prefixes achieved, not estimates of runs "
                                "with that budget)\n");
    text += "  policy                              exact  candidates/seed   solved (of " +
            std::to_string(c.suite.size()) + ")        geomean speedup       per-sample correct\n";
    for (const auto& req : requests) {
      std::vector<ReplayPolicy> points;
      if (req.curve)
        for (int k = 1; k <= std::max(1, longest); ++k) points.push_back(with_budget(req.policy, k));
      else
        points.push_back(req.policy);
      for (const auto& p : points) {
        auto e = estimate_policy(p, seeds);
        auto ej = estimate_json(e);
        ej["exact"] = e.exact && method_exact;
        ej["curve"] = req.curve;
        cj["estimates"].push_back(ej);
        char line[512];
        std::snprintf(line, sizeof line, "  %-36s %-6s %-17s %-21s %-21s %s\n", p.text().c_str(),
                      (e.exact && method_exact) ? "yes" : (e.exact ? "prefix" : "no"),
                      interval(e.samples, "%.1f").c_str(), interval(e.solved, "%.2f").c_str(),
                      interval(e.geomean_speedup, "%.3f").c_str(),
                      interval(e.per_sample_correctness, "%.3f").c_str());
        text += line;
      }
    }
    if (c.timing == "cpu-wall")
      text += "  (speedups: CPU interpret-mode wall-clock ratios, NOT TPU speedups)\n";
    out["conditions"].push_back(cj);
  }
  PolicyEvalReport report;
  report.text = "Offline policy evaluation: " + input.title + "\n" +
                "Mean over seeds [95% bootstrap interval over seeds]. exact: yes = what a run "
                "under the policy would have got; prefix = the recorded prefixes, but the method "
                "depends on its budget; no = a workload ran out of recording (lower bound).\n" +
                text + "\n" + out["note"].get<std::string>() + "\n";
  report.json = std::move(out);
  return report;
}

}  // namespace palladium
