// `palladium policy-eval DB --policy SPEC [--policy SPEC ...] [--sweep ID] [--json]`
//
// Estimates, from the trajectories a sweep recorded, what other budget
// policies would have achieved, with no LLM call and no evaluation
// (analysis/policy_replay.hpp). A SPEC with its budget ("prefix:4",
// "realloc:4,patience=1", "early-stop:2") is one point; a family without it
// ("prefix", "realloc", "realloc,patience=1") is the curve over every budget
// K from 1 to the longest recording.
#include "cli/commands.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "report/report_input.hpp"
#include "config/run_config.hpp"
#include "analysis/policy_replay.hpp"

namespace po = boost::program_options;

namespace palladium {
namespace {

struct PolicyRequest {
  std::string spec;
  bool curve = false;  // vary K over 1..longest
  ReplayPolicy policy;
};

PolicyRequest parse_request(const std::string& spec) {
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
    for (const auto& s : specs) requests.push_back(parse_request(s));
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
  if (json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "Offline policy evaluation: " << input.title << "\n"
              << "Mean over seeds [95% bootstrap interval over seeds]. exact: yes = what a run "
                 "under the policy would have got; prefix = the recorded prefixes, but the method "
                 "depends on its budget; no = a workload ran out of recording (lower bound).\n"
              << text << "\n" << out["note"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace palladium
