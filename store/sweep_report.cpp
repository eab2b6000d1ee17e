#include "store/sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "search/metrics.hpp"
#include "search/policy_replay.hpp"

namespace palladium {

const char* const kSweepMetricDefinitions =
    "Metrics (as defined by the JAXBench study; README.md, Metrics): per-sample correctness = "
    "correct / all generated candidates (no extractable code counts as generated and wrong); "
    "solved = workloads with >= 1 correct candidate; speedup(w) = baseline time / best correct "
    "time, 1.0 when none is correct; suite speedup = geomean over all workloads of "
    "max(speedup(w), 1.0); % of hand-tuned = suite speedup / hand-tuned suite speedup on the same "
    "workloads.";

namespace {

using ordered = nlohmann::ordered_json;

const std::string kCpuWall(to_string(TimingKind::cpu_wall));
const std::string kTpuProfiler(to_string(TimingKind::tpu_profiler));
const std::string kTpuWallFallback(to_string(TimingKind::tpu_wall_fallback));

ordered mi_json(const MeanInterval& m) {
  auto num = [](double v) { return std::isnan(v) ? ordered() : ordered(v); };
  return {{"mean", num(m.mean)}, {"low", num(m.low)}, {"high", num(m.high)}, {"n", m.n}};
}

// The weakest timing among timed candidates names them all (run_report.hpp).
std::string timing_of(const std::vector<const ReportCandidate*>& cands) {
  bool any = false, all_tpu = true, any_cpu = false;
  for (const auto* c : cands) {
    if (!c->verdict || !c->kernel_ms || c->timing_kind.empty()) continue;
    any = true;
    if (c->timing_kind != kTpuProfiler) all_tpu = false;
    if (c->timing_kind == kCpuWall) any_cpu = true;
  }
  if (!any || any_cpu) return kCpuWall;
  return all_tpu ? kTpuProfiler : kTpuWallFallback;
}

bool is_seed_axis(const std::string& axis) { return axis == "seed" || axis == "seeds"; }

}  // namespace

std::vector<SeedTrajectories> condition_trajectories(const ReportCondition& c) {
  std::map<int64_t, std::vector<const ReportCandidate*>> by_seed;
  for (const auto* k : c.evaluated) by_seed[k->seed].push_back(k);
  std::vector<SeedTrajectories> out;
  for (auto& [seed, cands] : by_seed) {
    std::stable_sort(cands.begin(), cands.end(), [](const auto* a, const auto* b) {
      return a->sample_index < b->sample_index;
    });
    SeedTrajectories t;
    t.seed = seed;
    t.suite = c.suite;
    for (const auto* k : cands) t.by_workload[k->workload].push_back({*k->verdict, k->speedup});
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

int longest(const std::vector<SeedTrajectories>& seeds) {
  size_t n = 0;
  for (const auto& s : seeds)
    for (const auto& [w, steps] : s.by_workload) n = std::max(n, steps.size());
  return static_cast<int>(n);
}

std::vector<CandidateResult> results_of(const std::vector<const ReportCandidate*>& cands) {
  std::vector<CandidateResult> out;
  for (const auto* c : cands) out.push_back({c->workload, *c->verdict, c->speedup});
  return out;
}

ordered condition_json(const ReportCondition& c) {
  auto seeds = condition_trajectories(c);
  std::vector<int64_t> seed_ids;
  for (const auto& s : seeds) seed_ids.push_back(s.seed);
  ordered cells = ordered::array();
  for (const auto* cell : c.cells) cells.push_back(cell->key);

  auto pooled = summarize_suite(summarize_workloads(c.suite, results_of(c.evaluated)));
  const int n = std::max(1, longest(seeds));
  ordered table2 = {{"candidates", pooled.candidates},
                    {"correct", pooled.correct},
                    {"workloads", static_cast<int>(c.suite.size())},
                    {"pooled_per_sample_correctness", pooled.per_sample_correctness}};
  ordered curve = ordered::array();
  if (!seeds.empty()) {
    auto all = estimate_policy(parse_replay_policy("prefix:" + std::to_string(n)), seeds);
    table2["per_sample_correctness"] = mi_json(all.per_sample_correctness);
    table2["solved"] = mi_json(all.solved);
    table2["geomean_speedup"] = mi_json(all.geomean_speedup);
    for (int k = 1; k <= longest(seeds); ++k) {
      auto e = estimate_policy(parse_replay_policy("prefix:" + std::to_string(k)), seeds);
      curve.push_back({{"samples_per_workload", k},
                       {"solved", mi_json(e.solved)},
                       {"geomean_speedup", mi_json(e.geomean_speedup)},
                       {"per_sample_correctness", mi_json(e.per_sample_correctness)}});
    }
  } else {
    for (const char* m : {"per_sample_correctness", "solved", "geomean_speedup"})
      table2[m] = mi_json(bootstrap_mean({}));
  }
  ordered outcomes = ordered::object();
  for (Verdict v : all_verdicts()) {
    int count = 0;
    for (const auto* k : c.evaluated) count += *k->verdict == v;
    if (count) outcomes[std::string(to_string(v))] = count;
  }
  ordered params = ordered::object();
  for (const auto& [k, v] : c.params) params[k] = v;
  return {{"key", c.key},     {"label", c.label},   {"method", c.method},
          {"model", c.model}, {"params", params}, {"cells", cells},
          {"seeds", seed_ids}, {"table2", table2},  {"outcomes", outcomes},
          {"curve", curve}};
}

double geomean_clipped(const std::vector<double>& v) {
  if (v.empty()) return 1.0;
  double s = 0;
  for (double x : v) s += std::log(std::max(x, 1.0));
  return std::exp(s / v.size());
}

ordered table3_json(const std::vector<ReportCondition>& conds, const std::string& timing,
                    const std::map<std::string, ReportCandidate>& hand_tuned) {
  std::vector<std::string> columns;
  for (const auto& w : kPriorityWorkloads)
    for (const auto& c : conds)
      if (std::count(c.suite.begin(), c.suite.end(), w)) {
        columns.push_back(w);
        break;
      }
  ordered ref = ordered::object(), ref_verdicts = ordered::object();
  std::map<std::string, double> ref_speedup;
  std::vector<std::string> not_comparable;
  for (const auto& w : columns) {
    double x = 1.0;
    auto it = hand_tuned.find(w);
    std::string verdict = "not evaluated";
    bool comparable = false;
    if (it != hand_tuned.end() && it->second.verdict) {
      verdict = std::string(to_string(*it->second.verdict));
      bool correct = *it->second.verdict == Verdict::correct && it->second.speedup;
      comparable = correct && it->second.timing_kind == timing;
      if (comparable)
        x = *it->second.speedup;
      else if (correct)
        verdict += " (timed " + it->second.timing_kind + ", not comparable)";
    }
    if (!comparable) not_comparable.push_back(w + ": " + verdict);
    ref_speedup[w] = x;
    ref[w] = x;
    ref_verdicts[w] = verdict;
  }
  std::vector<double> all_ref;
  for (const auto& w : columns) all_ref.push_back(ref_speedup[w]);

  ordered rows = ordered::array();
  for (const auto& c : conds) {
    std::vector<std::string> subset;
    for (const auto& w : columns)
      if (std::count(c.suite.begin(), c.suite.end(), w)) subset.push_back(w);
    if (subset.empty()) continue;
    auto seeds = condition_trajectories(c);
    std::map<std::string, std::vector<double>> per_w;
    std::vector<double> suites;
    for (const auto& s : seeds) {
      std::vector<CandidateResult> res;
      for (const auto& [w, steps] : s.by_workload)
        for (const auto& st : steps) res.push_back({w, st.verdict, st.speedup});
      auto ws = summarize_workloads(subset, res);
      for (const auto& x : ws) per_w[x.id].push_back(x.best_speedup);
      suites.push_back(summarize_suite(ws).geomean_speedup);
    }
    ordered speedups = ordered::object();
    for (const auto& w : subset) {
      auto& v = per_w[w];
      speedups[w] = v.empty() ? 1.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    }
    double suite = suites.empty() ? 1.0 : std::accumulate(suites.begin(), suites.end(), 0.0) /
                                              suites.size();
    std::vector<double> ref_subset;
    for (const auto& w : subset) ref_subset.push_back(ref_speedup[w]);
    double ref_suite = geomean_clipped(ref_subset);
    rows.push_back({{"key", c.key},
                    {"label", c.label},
                    {"speedups", speedups},
                    {"suite", suite},
                    {"hand_tuned_suite", ref_suite},
                    {"percent_of_hand_tuned", 100.0 * suite / ref_suite}});
  }
  std::string note =
      "Hand-tuned: the upstream Pallas kernels of workloads/hand_tuned/, evaluated as candidates "
      "by the same agents (timing " + timing + "). speedup(w) is the mean over seeds; the suite "
      "speedup is the mean over seeds of the geomean of max(speedup(w), 1) over the row's "
      "priority workloads.";
  if (!not_comparable.empty()) {
    note += " Counted as 1.0x (no comparable hand-tuned time here):";
    for (const auto& s : not_comparable) note += " " + s + ";";
  }
  return {{"workloads", columns},
          {"hand_tuned", ref},
          {"hand_tuned_verdicts", ref_verdicts},
          {"hand_tuned_suite", geomean_clipped(all_ref)},
          {"rows", rows},
          {"note", note}};
}

ordered cell_json(const ReportCell& cell) {
  std::vector<const ReportCandidate*> evaluated;
  std::set<int64_t> seeds;
  int pending = 0;
  for (const auto& c : cell.candidates) {
    if (c.verdict)
      evaluated.push_back(&c);
    else
      ++pending;
    seeds.insert(c.seed);
  }
  auto ws = summarize_workloads(cell.suite, results_of(evaluated));
  auto s = summarize_suite(ws);
  ordered per_workload = ordered::array();
  for (const auto& w : ws)
    per_workload.push_back({{"id", w.id},
                            {"candidates", w.candidates},
                            {"correct", w.correct},
                            {"best_speedup", w.best_speedup},
                            {"verdicts", w.verdicts}});
  ordered params = ordered::object();
  for (const auto& [k, v] : cell.params) params[k] = v;
  const auto& u = cell.usage;
  return {{"key", cell.key},
          {"ordinal", cell.ordinal},
          {"params", params},
          {"run_id", cell.run_id ? ordered(*cell.run_id) : ordered()},
          {"status", cell.status},
          {"status_reason", cell.status_reason},
          {"method", cell.method},
          {"planned", cell.planned},
          {"model", cell.model},
          {"timing", timing_of(evaluated)},
          {"seeds", std::vector<int64_t>(seeds.begin(), seeds.end())},
          {"candidates", s.candidates},
          {"pending", pending},
          {"correct", s.correct},
          {"solved", s.solved},
          {"workloads", s.workloads},
          {"geomean_speedup", s.geomean_speedup},
          {"llm",
           {{"calls", u.calls},
            {"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"thinking_tokens", u.thinking_tokens},
            {"cost_usd", u.cost_usd},
            {"cost_complete", u.cost_complete}}},
          {"per_workload", per_workload}};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string num_or_dash(const ordered& v, const char* f) {
  return v.is_number() ? fmt(f, v.get<double>()) : "-";
}

// "30.0% [25.0%, 35.0%]" or "1.23 [1.10, 1.31]"; no interval for one seed.
std::string mi_text(const ordered& m, bool pct, const char* f = "%.3f") {
  if (!m["mean"].is_number()) return "-";
  auto one = [&](const ordered& v) {
    return pct ? fmt("%.1f%%", 100.0 * v.get<double>()) : fmt(f, v.get<double>());
  };
  std::string s = one(m["mean"]);
  if (m["n"].get<int>() > 1) s += " [" + one(m["low"]) + ", " + one(m["high"]) + "]";
  return s;
}

std::string csv_field(std::string s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_num(const ordered& v) {
  if (!v.is_number()) return "";
  return fmt("%.6g", v.get<double>());
}

std::string warning_for(const std::string& timing) {
  if (timing == kCpuWall)
    return "**Timing: cpu-wall.** Speedups are CPU interpret-mode wall-clock ratios, NOT TPU "
           "speedups.";
  if (timing == kTpuWallFallback)
    return "**Timing: tpu-wall-fallback.** Some TPU times are host wall clock; treat speedups "
           "as lower bounds.";
  return "**Timing: tpu-profiler** (TPU device time from the profiler).";
}

}  // namespace

std::vector<ReportCondition> report_conditions(const SweepReportInput& input) {
  std::vector<ReportCondition> conds;
  for (const auto& cell : input.cells) {
    std::string key;
    std::vector<std::pair<std::string, std::string>> params;
    for (const auto& [axis, label] : cell.params) {
      if (is_seed_axis(axis)) continue;
      key += (key.empty() ? "" : ",") + axis + "=" + label;
      params.emplace_back(axis, label);
    }
    if (key.empty()) key = input.cells.size() > 1 && cell.params.empty() ? cell.key : "all";
    auto it = std::find_if(conds.begin(), conds.end(), [&](const ReportCondition& c) { return c.key == key; });
    if (it == conds.end()) {
      ReportCondition c;
      c.key = key;
      c.label = key == "all" ? "method=" + cell.method : key;
      c.method = cell.method;
      c.model = cell.model;
      c.params = params;
      c.suite = cell.suite;
      conds.push_back(std::move(c));
      it = conds.end() - 1;
    }
    it->cells.push_back(&cell);
    if (it->model != cell.model) it->model = "mixed";
    for (const auto& k : cell.candidates)
      if (k.verdict) it->evaluated.push_back(&k);
  }
  for (auto& c : conds) c.timing = timing_of(c.evaluated);

  return conds;
}

nlohmann::ordered_json sweep_report_json(const SweepReportInput& input) {
  std::vector<ReportCondition> conds = report_conditions(input);

  // Groups by timing kind, strongest first.
  std::vector<std::string> timings;
  for (const auto& t : {kTpuProfiler, kTpuWallFallback, kCpuWall})
    for (const auto& c : conds)
      if (c.timing == t) {
        timings.push_back(t);
        break;
      }
  std::set<std::string> models;
  ordered groups = ordered::array();
  std::map<std::string, std::pair<const ReportCandidate*, const ReportCell*>> best_by;  // timing|w
  for (const auto& t : timings) {
    std::vector<ReportCondition> mine;
    std::set<std::string> group_models;
    for (const auto& c : conds)
      if (c.timing == t) {
        mine.push_back(c);
        group_models.insert(c.model);
        models.insert(c.model);
      }
    ordered cj = ordered::array();
    for (const auto& c : mine) cj.push_back(condition_json(c));
    std::string model;
    for (const auto& m : group_models) model += (model.empty() ? "" : ", ") + m;
    groups.push_back({{"timing", t},
                      {"model", model},
                      {"suffix", timings.size() > 1 ? "_" + t : ""},
                      {"conditions", cj},
                      {"table3", table3_json(mine, t, input.hand_tuned)}});
    for (const auto& c : mine)
      for (const auto* cell : c.cells)
        for (const auto& k : cell->candidates) {
          if (k.verdict != Verdict::correct || !k.speedup) continue;
          auto& slot = best_by[t + "|" + k.workload];
          if (!slot.first || *k.speedup > *slot.first->speedup) slot = {&k, cell};
        }
  }

  // Workloads: the union of the suites, in first-seen order.
  std::vector<std::string> workload_ids;
  for (const auto& cell : input.cells)
    for (const auto& w : cell.suite)
      if (!std::count(workload_ids.begin(), workload_ids.end(), w)) workload_ids.push_back(w);
  ordered workloads = ordered::array();
  for (const auto& w : workload_ids) {
    auto flag = input.sensitivity.find(w);
    std::vector<std::string> ignored =
        flag == input.sensitivity.end() ? std::vector<std::string>{} : flag->second;
    ordered best = ordered::array();
    for (const auto& t : timings) {
      auto it = best_by.find(t + "|" + w);
      if (it == best_by.end()) continue;
      const auto& [k, cell] = it->second;
      std::string suffix = timings.size() > 1 ? "." + t : "";
      best.push_back({{"timing", t},
                      {"candidate_id", k->id},
                      {"cell", cell->key},
                      {"model", cell->model},
                      {"seed", k->seed},
                      {"sample_index", k->sample_index},
                      {"speedup", *k->speedup},
                      {"kernel_ms", k->kernel_ms ? ordered(*k->kernel_ms) : ordered()},
                      {"baseline_ms", k->baseline_ms ? ordered(*k->baseline_ms) : ordered()},
                      {"file", "kernels/" + w + suffix + ".py"},
                      {"history", "kernels/" + w + ".history.csv"}});
    }
    workloads.push_back({{"id", w},
                         {"degenerate", !ignored.empty()},
                         {"insensitive_inputs", ignored},
                         {"best", best}});
  }

  ordered cells = ordered::array();
  for (const auto& cell : input.cells) cells.push_back(cell_json(cell));
  return ordered{{"title", input.title},
                 {"definitions", kSweepMetricDefinitions},
                 {"models", std::vector<std::string>(models.begin(), models.end())},
                 {"timings", timings},
                 {"groups", groups},
                 {"cells", cells},
                 {"workloads", workloads}};
}

std::string sweep_report_markdown(const nlohmann::ordered_json& r) {
  std::string md = "# Palladium report: " + r["title"].get<std::string>() + "\n\n";
  for (const auto& m : r["models"]) {
    auto model = m.get<std::string>();
    if (model == "synthetic" || model == "replay")
      md += "Results of the offline **model: " + model + "** (" +
            (model == "synthetic" ? "a synthetic model written for tests, not an LLM"
                                  : "recorded responses replayed, not a live LLM") +
            ").\n\n";
  }
  std::set<std::string> degenerate;
  for (const auto& w : r["workloads"])
    if (w["degenerate"].get<bool>()) degenerate.insert(w["id"].get<std::string>());

  for (const auto& g : r["groups"]) {
    const std::string timing = g["timing"], sfx = g["suffix"];
    md += "## Timing " + timing + "\n\n" + warning_for(timing) + " Model: " +
          g["model"].get<std::string>() + ".\n\n";
    md += "### Table 2: methods compared\n\n";
    md += "| condition | model | seeds | candidates | per-sample correctness | solved | geomean "
          "speedup |\n|---|---|---|---|---|---|---|\n";
    for (const auto& c : g["conditions"]) {
      const auto& t = c["table2"];
      md += "| " + c["label"].get<std::string>() + " | " + c["model"].get<std::string>() + " | " +
            std::to_string(c["seeds"].size()) + " | " + std::to_string(t["candidates"].get<int>()) +
            " | " + mi_text(t["per_sample_correctness"], true) + " | " +
            mi_text(t["solved"], false, "%.2f") + " / " + std::to_string(t["workloads"].get<int>()) +
            " | " + mi_text(t["geomean_speedup"], false) + "x |\n";
    }
    md += "\nMean over seeds [95% bootstrap interval over seeds]. ![Table 2](table2" + sfx +
          ".png) CSV: `table2.csv`.\n\n";

    const auto& t3 = g["table3"];
    md += "### Table 3: priority workloads against the hand-tuned references\n\n";
    if (t3["workloads"].empty()) {
      md += "No priority workload (one with a hand-tuned reference) is in these suites.\n\n";
    } else {
      md += "| condition |";
      for (const auto& w : t3["workloads"]) md += " " + w.get<std::string>() + " |";
      md += " suite | % of hand-tuned |\n|---|";
      for (size_t i = 0; i < t3["workloads"].size() + 2; ++i) md += "---|";
      md += "\n| hand-tuned reference |";
      for (const auto& w : t3["workloads"]) md += " " + fmt("%.3f", t3["hand_tuned"][w.get<std::string>()].get<double>()) + " |";
      md += " " + fmt("%.3f", t3["hand_tuned_suite"].get<double>()) + " | 100% |\n";
      for (const auto& row : t3["rows"]) {
        md += "| " + row["label"].get<std::string>() + " |";
        for (const auto& w : t3["workloads"]) {
          auto& v = row["speedups"][w.get<std::string>()];
          md += " " + num_or_dash(v, "%.3f") + " |";
        }
        md += " " + fmt("%.3f", row["suite"].get<double>()) + " | " +
              fmt("%.0f%%", row["percent_of_hand_tuned"].get<double>()) + " |\n";
      }
      md += "\n" + t3["note"].get<std::string>() + " ![Table 3](table3" + sfx +
            ".png) CSV: `table3.csv`.\n\n";
    }

    md += "### Figure 4: outcome classes\n\n![Figure 4](figure4" + sfx + ".png)\n\n";
    md += "| condition | candidates | outcomes |\n|---|---|---|\n";
    for (const auto& c : g["conditions"]) {
      std::string o;
      int total = 0;
      for (auto& [v, n] : c["outcomes"].items()) total += n.get<int>();
      for (auto& [v, n] : c["outcomes"].items())
        o += (o.empty() ? "" : ", ") + v + " " + std::to_string(n.get<int>()) + " (" +
             fmt("%.0f%%", total ? 100.0 * n.get<int>() / total : 0.0) + ")";
      md += "| " + c["label"].get<std::string>() + " | " + std::to_string(total) + " | " + o + " |\n";
    }
    md += "\nCSV: `figure4.csv`.\n\n### Budget curves\n\n![Budget curves](budget_curves" + sfx +
          ".png)\n\nSolved and geomean speedup of the first k candidates of every workload "
          "(prefixes of the recorded searches), mean over seeds with 95% bootstrap bands. CSV: "
          "`budget_curves.csv`.\n\n";
  }

  md += "## Cells\n\n| cell | status | model | timing | seeds | candidates | correct | solved | "
        "geomean speedup | LLM calls | tokens in / out / thinking | cost |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : r["cells"]) {
    const auto& u = c["llm"];
    std::string seeds;
    for (const auto& s : c["seeds"]) seeds += (seeds.empty() ? "" : " ") + std::to_string(s.get<int64_t>());
    std::string status = c["status"].get<std::string>();
    if (!c["status_reason"].get<std::string>().empty()) status += " (" + c["status_reason"].get<std::string>() + ")";
    if (c["pending"].get<int>() > 0) status += ", " + std::to_string(c["pending"].get<int>()) + " not evaluated";
    md += "| " + c["key"].get<std::string>() + " | " + status + " | " + c["model"].get<std::string>() +
          " | " + c["timing"].get<std::string>() + " | " + seeds + " | " +
          std::to_string(c["candidates"].get<int>()) + " | " + std::to_string(c["correct"].get<int>()) +
          " | " + std::to_string(c["solved"].get<int>()) + "/" + std::to_string(c["workloads"].get<int>()) +
          " | " + fmt("%.3f", c["geomean_speedup"].get<double>()) + "x | " +
          std::to_string(u["calls"].get<int64_t>()) + " | " +
          std::to_string(u["prompt_tokens"].get<int64_t>()) + " / " +
          std::to_string(u["completion_tokens"].get<int64_t>()) + " / " +
          std::to_string(u["thinking_tokens"].get<int64_t>()) + " | " +
          (u["cost_complete"].get<bool>() ? fmt("$%.4f", u["cost_usd"].get<double>())
                                          : fmt(">= $%.4f (some calls unpriced)", u["cost_usd"].get<double>())) +
          " |\n";
  }
  md += "\nCSV: `cells.csv`. Per-workload rows of every cell are in `report.json`.\n\n";

  md += "## Best kernel per workload\n\n| workload | best | cell | timing | file |\n|---|---|---|---|---|\n";
  for (const auto& w : r["workloads"]) {
    std::string id = w["id"].get<std::string>() + (w["degenerate"].get<bool>() ? "*" : "");
    if (w["best"].empty()) {
      md += "| " + id + " | no correct kernel | - | - | history: `kernels/" + w["id"].get<std::string>() + ".history.csv` |\n";
      continue;
    }
    for (const auto& b : w["best"])
      md += "| " + id + " | " + fmt("%.3fx", b["speedup"].get<double>()) + " | " +
            b["cell"].get<std::string>() + " (seed " + std::to_string(b["seed"].get<int64_t>()) +
            ", sample " + std::to_string(b["sample_index"].get<int>()) + ") | " +
            b["timing"].get<std::string>() + " | `" + b["file"].get<std::string>() +
            "`, history `" + b["history"].get<std::string>() + "` |\n";
  }
  if (!degenerate.empty()) {
    md += "\n\\* Degenerate workloads (their reference ignores an input; docs/verification.md): ";
    for (const auto& w : r["workloads"]) {
      if (!w["degenerate"].get<bool>()) continue;
      std::string inputs;
      for (const auto& i : w["insensitive_inputs"]) inputs += (inputs.empty() ? "" : ", ") + i.get<std::string>();
      md += w["id"].get<std::string>() + " ignores " + inputs + "; ";
    }
    md += "a speedup there is not meaningful.\n";
  }
  md += "\n## Definitions\n\n" + r["definitions"].get<std::string>() + "\n";
  return md;
}

std::map<std::string, std::string> sweep_report_csv(const nlohmann::ordered_json& r) {
  std::string t2 =
      "timing,model,condition,seeds,candidates,correct,workloads,pooled_per_sample_correctness,"
      "per_sample_correctness,per_sample_correctness_low,per_sample_correctness_high,solved,"
      "solved_low,solved_high,geomean_speedup,geomean_speedup_low,geomean_speedup_high\n";
  std::string t3 = "timing,condition,workload,speedup,hand_tuned_speedup,suite,hand_tuned_suite,percent_of_hand_tuned\n";
  std::string f4 = "timing,model,condition,verdict,count,share\n";
  std::string bc =
      "timing,model,condition,samples_per_workload,solved,solved_low,solved_high,geomean_speedup,"
      "geomean_speedup_low,geomean_speedup_high,seeds\n";
  for (const auto& g : r["groups"]) {
    const std::string timing = g["timing"];
    for (const auto& c : g["conditions"]) {
      const std::string pre = timing + "," + csv_field(c["model"]) + "," + csv_field(c["label"]);
      const auto& t = c["table2"];
      t2 += pre + "," + std::to_string(c["seeds"].size()) + "," + std::to_string(t["candidates"].get<int>()) +
            "," + std::to_string(t["correct"].get<int>()) + "," + std::to_string(t["workloads"].get<int>()) +
            "," + csv_num(t["pooled_per_sample_correctness"]);
      for (const char* m : {"per_sample_correctness", "solved", "geomean_speedup"})
        t2 += "," + csv_num(t[m]["mean"]) + "," + csv_num(t[m]["low"]) + "," + csv_num(t[m]["high"]);
      t2 += "\n";
      int total = 0;
      for (auto& [v, n] : c["outcomes"].items()) total += n.get<int>();
      for (auto& [v, n] : c["outcomes"].items())
        f4 += pre + "," + v + "," + std::to_string(n.get<int>()) + "," +
              fmt("%.6g", total ? static_cast<double>(n.get<int>()) / total : 0.0) + "\n";
      for (const auto& p : c["curve"])
        bc += pre + "," + std::to_string(p["samples_per_workload"].get<int>()) + "," +
              csv_num(p["solved"]["mean"]) + "," + csv_num(p["solved"]["low"]) + "," +
              csv_num(p["solved"]["high"]) + "," + csv_num(p["geomean_speedup"]["mean"]) + "," +
              csv_num(p["geomean_speedup"]["low"]) + "," + csv_num(p["geomean_speedup"]["high"]) +
              "," + std::to_string(p["solved"]["n"].get<int>()) + "\n";
    }
    const auto& tt = g["table3"];
    for (const auto& row : tt["rows"])
      for (auto& [w, v] : row["speedups"].items())
        t3 += timing + "," + csv_field(row["label"]) + "," + w + "," + csv_num(v) + "," +
              csv_num(tt["hand_tuned"][w]) + "," + csv_num(row["suite"]) + "," +
              csv_num(row["hand_tuned_suite"]) + "," + csv_num(row["percent_of_hand_tuned"]) + "\n";
  }
  std::string cells =
      "cell,status,status_reason,model,timing,seeds,candidates,pending,correct,solved,workloads,"
      "geomean_speedup,llm_calls,prompt_tokens,completion_tokens,thinking_tokens,cost_usd,"
      "cost_complete\n";
  for (const auto& c : r["cells"]) {
    std::string seeds;
    for (const auto& s : c["seeds"]) seeds += (seeds.empty() ? "" : " ") + std::to_string(s.get<int64_t>());
    const auto& u = c["llm"];
    cells += csv_field(c["key"]) + "," + c["status"].get<std::string>() + "," +
             csv_field(c["status_reason"]) + "," + csv_field(c["model"]) + "," +
             c["timing"].get<std::string>() + "," + seeds + "," +
             std::to_string(c["candidates"].get<int>()) + "," + std::to_string(c["pending"].get<int>()) +
             "," + std::to_string(c["correct"].get<int>()) + "," + std::to_string(c["solved"].get<int>()) +
             "," + std::to_string(c["workloads"].get<int>()) + "," + csv_num(c["geomean_speedup"]) + "," +
             std::to_string(u["calls"].get<int64_t>()) + "," + std::to_string(u["prompt_tokens"].get<int64_t>()) +
             "," + std::to_string(u["completion_tokens"].get<int64_t>()) + "," +
             std::to_string(u["thinking_tokens"].get<int64_t>()) + "," + csv_num(u["cost_usd"]) + "," +
             (u["cost_complete"].get<bool>() ? "1" : "0") + "\n";
  }
  return {{"table2.csv", t2}, {"table3.csv", t3}, {"figure4.csv", f4},
          {"budget_curves.csv", bc}, {"cells.csv", cells}};
}

}  // namespace palladium
