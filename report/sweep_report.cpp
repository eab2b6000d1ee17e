#include "report/sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "analysis/metrics.hpp"
#include "analysis/paired_comparison.hpp"
#include "analysis/fast_p.hpp"
#include "analysis/pass_at_k.hpp"
#include "search/plausibility.hpp"
#include "analysis/policy_replay.hpp"
#include "search/roofline.hpp"
#include "analysis/score_grid.hpp"
#include "report/sweep_report_compare.hpp"
#include "report/sweep_report_sittings.hpp"
#include "report/sweep_report_llm.hpp"
#include "workloads/workload_catalog.hpp"

namespace palladium {

const char* const kSweepMetricDefinitions =
    "Metrics (as defined by the JAXBench study; README.md, Metrics): per-sample correctness = "
    "correct / all generated candidates (no extractable code counts as generated and wrong); "
    "solved = workloads with >= 1 correct candidate; speedup(w) = baseline time / best correct "
    "time, 1.0 when none is correct; suite speedup = geomean over all workloads of "
    "max(speedup(w), 1.0); % of hand-tuned = suite speedup / hand-tuned suite speedup on the same "
    "workloads. IQM speedup = interquartile mean of max(speedup(w), 1) over (workload, seed) runs; "
    "pass@k = mean over runs of 1 - C(n-c, k) / C(n, k); fast_p = share of workloads whose best "
    "correct kernel is more than p times faster than the baseline; P(A>B) = probability that a "
    "run of A is faster than a run of B on the same workload; roofline fraction = the v6e "
    "roofline's floor time / measured time (not meaningful for cpu-wall times).";

namespace {

using ordered = nlohmann::ordered_json;

const std::string kCpuWall(to_string(TimingKind::cpu_wall));
const std::string kTpuProfiler(to_string(TimingKind::tpu_profiler));
const std::string kTpuWallFallback(to_string(TimingKind::tpu_wall_fallback));

// {"value", "low", "high"}, all null when there is nothing to estimate.
ordered estimate_json(const std::optional<Estimate>& e) {
  auto num = [](double v) { return std::isnan(v) ? ordered() : ordered(v); };
  if (!e) return {{"value", nullptr}, {"low", nullptr}, {"high", nullptr}};
  return {{"value", num(e->value)}, {"low", num(e->low)}, {"high", num(e->high)}};
}

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

ordered band_json(const ReportCandidate& k) {
  if (!k.kernel_ms_low || !k.kernel_ms_high) return nullptr;
  return ordered::array({*k.kernel_ms_low, *k.kernel_ms_high});
}

// The next-fastest correct kernel, and whether its kernel-time band overlaps the best's.
ordered runner_up_json(const ReportCandidate& best, const ReportCandidate* next) {
  if (!next) return nullptr;
  ordered overlap = nullptr;
  if (best.kernel_ms_high && next->kernel_ms_low)
    overlap = *best.kernel_ms_high >= *next->kernel_ms_low;
  return {{"candidate_id", next->id},
          {"speedup", next->speedup ? ordered(*next->speedup) : ordered()},
          {"kernel_ms", next->kernel_ms ? ordered(*next->kernel_ms) : ordered()},
          {"kernel_ms_band", band_json(*next)},
          {"bands_overlap", overlap}};
}

// The best kernel's and the baseline's share of the v6e roofline; null without
// a cost or a time. Only a TPU time is measured on the chip the peaks are of.
ordered roofline_json(const WorkloadCosts& costs, const std::string& w, const std::string& timing,
                      const std::optional<double>& kernel_ms,
                      const std::optional<double>& baseline_ms) {
  auto cost = costs.find(w);
  if (cost == costs.end() || !kernel_ms || !(*kernel_ms > 0)) return nullptr;
  auto k = roofline_fraction(cost->second, *kernel_ms);
  ordered base = nullptr;
  if (baseline_ms && *baseline_ms > 0) base = roofline_fraction(cost->second, *baseline_ms).fraction;
  return {{"fraction", k.fraction},     {"baseline_fraction", base},
          {"bound", k.bound},           {"floor_ms", k.floor_ms},
          {"peaks", kTpuV6e.name},      {"meaningful", timing != kCpuWall}};
}

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
  ordered pass = ordered::array(), fast = ordered::array(), iqm = estimate_json(std::nullopt);
  if (!seeds.empty()) {
    const ScoreGrid grid = score_grid(seeds);
    iqm = estimate_json(stratified_interval(grid, grid_iqm));
    for (int k : kPassAtK)
      if (pass_at_k_defined(grid, k))
        pass.push_back({{"k", k},
                        {"estimate", estimate_json(stratified_interval(
                                         grid, [k](const ScoreGrid& g, const Selection& s) {
                                           return grid_pass_at_k(g, s, k);
                                         }))}});
    for (double p : kFastP)
      fast.push_back({{"p", p},
                      {"estimate", estimate_json(stratified_interval(
                                       grid, [p](const ScoreGrid& g, const Selection& s) {
                                         return grid_fast_p(g, s, p);
                                       }))}});
  }
  table2["iqm_speedup"] = iqm;
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
          {"seeds", seed_ids}, {"table2", table2},  {"pass_at_k", pass},
          {"fast_p", fast},   {"outcomes", outcomes}, {"curve", curve}};
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
  for (const auto& w : workload_catalog().hand_tuned_ids())
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
  // With no comparable hand-tuned time the reference row is all 1.0 by
  // convention; a percentage of that would read as a result.
  const bool ran = not_comparable.size() < columns.size();

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
                    {"percent_of_hand_tuned",
                     ran ? ordered(100.0 * suite / ref_suite) : ordered()}});
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
          {"hand_tuned_ran", ran},
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
          {"sittings", {{"published", cell.sitting_bests}, {"unsettled", cell.sitting_unsettled}}},
          {"llm",
           {{"calls", u.calls},
            {"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"thinking_tokens", u.thinking_tokens},
            {"cost_usd", u.cost_usd},
            {"cost_complete", u.cost_complete},
            {"cached_prompt_tokens", u.cached_prompt_tokens},
            {"cache_saved_usd", u.cache_saved_usd ? ordered(*u.cache_saved_usd) : ordered()},
            {"paid", {{"prompt_tokens", u.paid_prompt_tokens}, {"output_tokens", u.paid_output_tokens},
                      {"usd", u.paid_usd}}},
            {"reused", {{"prompt_tokens", u.reused_prompt_tokens},
                        {"output_tokens", u.reused_output_tokens}, {"usd", u.reused_usd}}},
            {"alone_usd", u.paid_usd + u.reused_usd},
            {"truncated", u.truncated}}},
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


// "1.234" and "[1.100, 1.310]" (or "-" when there is no interval: one seed).
std::string value_text(const ordered& v, const char* f, double scale = 1.0) {
  return v.is_number() ? fmt(f, scale * v.get<double>()) : "-";
}

std::string interval_text(const ordered& low, const ordered& high, const char* f,
                          double scale = 1.0, bool show = true) {
  if (!show || !low.is_number() || !high.is_number()) return "-";
  return "[" + fmt(f, scale * low.get<double>()) + ", " + fmt(f, scale * high.get<double>()) + "]";
}

int min_seeds(const ordered& g) {
  int n = -1;
  for (const auto& c : g["conditions"]) {
    int s = static_cast<int>(c["seeds"].size());
    if (n < 0 || s < n) n = s;
  }
  return n < 0 ? 0 : n;
}

std::string few_seeds_line(const ordered& g) {
  int n = min_seeds(g);
  if (n >= kFewSeeds) return "";
  return "**Warning:** intervals here rest on " + std::to_string(n) + " seed(s) per workload "
         "(fewer than " + std::to_string(kFewSeeds) + "); they are rough, and with one seed there "
         "is none.\n\n";
}

// The comparison to quote under Table 2: the first along the method axis, else the first.
const ordered* headline_comparison(const ordered& g) {
  for (const auto& c : g["comparisons"])
    if (c["axis"] == "method") return &c;
  return g["comparisons"].empty() ? nullptr : &g["comparisons"][0];
}

std::string table2_markdown(const ordered& g, const std::string& sfx) {
  std::string md = "### Table 2: methods compared\n\n";
  const ordered* head = headline_comparison(g);
  md += "Reading: " + (head ? (*head)["reading"].get<std::string>()
                            : std::string("one condition only; nothing to compare.")) + "\n\n";
  md += "| condition | model | seeds | candidates | per-sample correctness | 95% interval | "
        "solved | 95% interval | geomean speedup | 95% interval | IQM speedup | 95% interval "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : g["conditions"]) {
    const auto& t = c["table2"];
    const bool several = c["seeds"].size() > 1;
    const auto &pc = t["per_sample_correctness"], &sv = t["solved"], &gm = t["geomean_speedup"],
               &iq = t["iqm_speedup"];
    md += "| " + c["label"].get<std::string>() + " | " + c["model"].get<std::string>() + " | " +
          std::to_string(c["seeds"].size()) + " | " + std::to_string(t["candidates"].get<int>()) +
          " | " + value_text(pc["mean"], "%.1f%%", 100) + " | " +
          interval_text(pc["low"], pc["high"], "%.1f%%", 100, several) + " | " +
          value_text(sv["mean"], "%.2f") + " / " + std::to_string(t["workloads"].get<int>()) +
          " | " + interval_text(sv["low"], sv["high"], "%.2f", 1, several) + " | " +
          value_text(gm["mean"], "%.3fx") + " | " +
          interval_text(gm["low"], gm["high"], "%.3f", 1, several) + " | " +
          value_text(iq["value"], "%.3fx") + " | " +
          interval_text(iq["low"], iq["high"], "%.3f", 1, several) + " |\n";
  }
  md += "\n" + few_seeds_line(g) +
        "Definitions: per-sample correctness = correct / generated candidates; solved = "
        "workloads with a correct candidate; geomean speedup = geomean over workloads of "
        "max(speedup(w), 1); IQM speedup = interquartile mean of max(speedup(w), 1) over all "
        "(workload, seed) runs (rliable). Each a mean over seeds with a 95% percentile-bootstrap "
        "interval over seeds (IQM: stratified bootstrap within workloads). ![Table 2](table2" +
        sfx + ".png) CSV: `table2.csv`.\n\n";
  return md;
}

std::string pass_fast_markdown(const ordered& g, const std::string& sfx) {
  std::string md = "### pass@k and fast_p\n\n";
  // Reading: the condition with the most workloads correct and faster than the baseline.
  const ordered* best = nullptr;
  double best_fast = -1;
  for (const auto& c : g["conditions"])
    for (const auto& f : c["fast_p"])
      if (f["p"].get<double>() == 1.0 && f["estimate"]["value"].is_number() &&
          f["estimate"]["value"].get<double>() > best_fast) {
        best_fast = f["estimate"]["value"].get<double>();
        best = &c;
      }
  if (best) {
    const auto* f1 = &(*best)["fast_p"][0];
    for (const auto& f : (*best)["fast_p"])
      if (f["p"].get<double>() == 1.0) f1 = &f;
    const auto& e = (*f1)["estimate"];
    md += "Reading: " + (*best)["label"].get<std::string>() + " has the most workloads with a "
          "correct kernel faster than the baseline: fast_1.0 = " + value_text(e["value"], "%.2f") +
          " " + interval_text(e["low"], e["high"], "%.2f") + ".\n\n";
  }
  std::vector<int> ks;
  for (const auto& c : g["conditions"])
    for (const auto& p : c["pass_at_k"])
      if (!std::count(ks.begin(), ks.end(), p["k"].get<int>())) ks.push_back(p["k"].get<int>());
  std::sort(ks.begin(), ks.end());
  md += "| condition |";
  std::string rule = "|---|";
  for (int k : ks) {
    md += " pass@" + std::to_string(k) + " | 95% interval |";
    rule += "---|---|";
  }
  for (double p : kFastP) {
    md += " fast_" + fmt("%.1f", p) + " | 95% interval |";
    rule += "---|---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& c : g["conditions"]) {
    const bool several = c["seeds"].size() > 1;
    md += "| " + c["label"].get<std::string>() + " |";
    for (int k : ks) {
      const ordered* hit = nullptr;
      for (const auto& p : c["pass_at_k"])
        if (p["k"].get<int>() == k) hit = &p;
      if (!hit) {
        md += " n too small | - |";
        continue;
      }
      const auto& e = (*hit)["estimate"];
      md += " " + value_text(e["value"], "%.3f") + " | " +
            interval_text(e["low"], e["high"], "%.3f", 1, several) + " |";
    }
    for (const auto& f : c["fast_p"]) {
      const auto& e = f["estimate"];
      md += " " + value_text(e["value"], "%.3f") + " | " +
            interval_text(e["low"], e["high"], "%.3f", 1, several) + " |";
    }
    md += "\n";
  }
  md += "\n" + few_seeds_line(g) +
        "Definitions: pass@k = mean over (workload, seed) runs of 1 - C(n-c, k) / C(n, k) "
        "(n candidates of the run, c correct; shown for the k every run allows); fast_p = share "
        "of workloads whose best correct kernel is more than p times faster than the baseline "
        "(fast_0 = solved share), mean over seeds. 95% stratified bootstrap intervals (seeds "
        "resampled within workloads). ![fast_p](fast_p" + sfx + ".png) CSV: `pass_at_k.csv`, "
        "`fast_p.csv`.\n\n";
  return md;
}

std::string comparisons_markdown(const ordered& g) {
  std::string md = "### Paired comparisons\n\n";
  if (g["comparisons"].empty())
    return md + "No two conditions here differ in exactly one axis; `palladium compare DB --a "
                "SPEC --b SPEC` compares any two.\n\n";
  for (const auto& c : g["comparisons"]) {
    md += "- " + c["reading"].get<std::string>();
    if (!c["warning"].get<std::string>().empty()) md += " *" + c["warning"].get<std::string>() + "*";
    md += "\n";
  }
  md += "\n| A | B | differs in | speed A - B | 95% interval | IQM A - B | 95% interval | solved "
        "A - B | 95% interval | correctness A - B | 95% interval | P(A>B) | 95% interval "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : g["comparisons"]) {
    auto d = [&](const char* m, const char* f, double scale) {
      const auto& x = c[m];
      return fmt(f, scale * x["diff"].get<double>()) + " | " +
             interval_text(x["low"], x["high"], f, scale);
    };
    const auto& p = c["p_improvement"];
    md += "| " + c["a"].get<std::string>() + " | " + c["b"].get<std::string>() + " | " +
          c["axis"].get<std::string>() + " | " + d("geomean_speedup", "%+.3f", 1) + " | " +
          d("iqm_speedup", "%+.3f", 1) + " | " + d("solved", "%+.2f", 1) + " | " +
          d("per_sample_correctness", "%+.1f", 100) + " | " + fmt("%.2f", p["value"].get<double>()) +
          " | " + interval_text(p["low"], p["high"], "%.2f") + " |\n";
  }
  md += "\nDefinitions: " + std::string(kComparisonDefinitions) + " CSV: `comparisons.csv`.\n\n";
  return md;
}

std::string table3_markdown(const ordered& g, const std::string& sfx) {
  const auto& t3 = g["table3"];
  std::string md = "### Table 3: priority workloads against the hand-tuned references\n\n";
  if (t3["workloads"].empty())
    return md + "No priority workload (one with a hand-tuned reference) is in these suites.\n\n";
  const bool ran = t3["hand_tuned_ran"].get<bool>();
  if (!ran) {
    md += "Reading: no hand-tuned reference has a comparable time here (no hand-tuned run), so "
          "no condition is stated as a share of it.\n\n";
  } else {
    const ordered* best = nullptr;
    for (const auto& row : t3["rows"])
      if (!best || row["percent_of_hand_tuned"].get<double>() >
                       (*best)["percent_of_hand_tuned"].get<double>())
        best = &row;
    if (best)
      md += "Reading: " + (*best)["label"].get<std::string>() + " reaches " +
            fmt("%.0f%%", (*best)["percent_of_hand_tuned"].get<double>()) +
            " of the hand-tuned suite speedup on the priority workloads (" +
            fmt("%.3fx", (*best)["suite"].get<double>()) + " against " +
            fmt("%.3fx", (*best)["hand_tuned_suite"].get<double>()) + ").\n\n";
  }
  md += "| condition |";
  for (const auto& w : t3["workloads"]) md += " " + w.get<std::string>() + " |";
  md += " suite | % of hand-tuned |\n|---|";
  for (size_t i = 0; i < t3["workloads"].size() + 2; ++i) md += "---|";
  md += "\n| hand-tuned reference |";
  for (const auto& w : t3["workloads"]) {
    const std::string verdict = t3["hand_tuned_verdicts"][w.get<std::string>()];
    const bool timed = verdict == "correct";
    md += " " + (timed ? fmt("%.3f", t3["hand_tuned"][w.get<std::string>()].get<double>())
                       : std::string("no hand-tuned run")) + " |";
  }
  md += " " + (ran ? fmt("%.3f", t3["hand_tuned_suite"].get<double>()) : std::string("-")) +
        " | " + (ran ? "100%" : "no hand-tuned run") + " |\n";
  for (const auto& row : t3["rows"]) {
    md += "| " + row["label"].get<std::string>() + " |";
    for (const auto& w : t3["workloads"]) md += " " + num_or_dash(row["speedups"][w.get<std::string>()], "%.3f") + " |";
    md += " " + fmt("%.3f", row["suite"].get<double>()) + " | " +
          (row["percent_of_hand_tuned"].is_number()
               ? fmt("%.0f%%", row["percent_of_hand_tuned"].get<double>())
               : std::string("no hand-tuned run")) + " |\n";
  }
  md += "\nDefinitions: " + t3["note"].get<std::string>() + " % of hand-tuned = suite speedup / "
        "hand-tuned suite speedup over the same workloads. ![Table 3](table3" + sfx +
        ".png) CSV: `table3.csv`.\n\n";
  return md;
}

std::string figure4_markdown(const ordered& g, const std::string& sfx) {
  std::string md = "### Figure 4: outcome classes\n\n";
  std::string reading;
  for (const auto& c : g["conditions"]) {
    int total = 0, top = 0;
    std::string top_v;
    for (auto& [v, n] : c["outcomes"].items()) {
      total += n.get<int>();
      if (v != "correct" && n.get<int>() > top) top = n.get<int>(), top_v = v;
    }
    if (!total) continue;
    int correct = c["outcomes"].contains("correct") ? c["outcomes"]["correct"].get<int>() : 0;
    reading += (reading.empty() ? "" : "; ") + c["label"].get<std::string>() + " " +
               fmt("%.0f%%", 100.0 * correct / total) + " correct" +
               (top ? ", most often failing as " + top_v + " (" + fmt("%.0f%%", 100.0 * top / total) + ")"
                    : std::string());
  }
  if (!reading.empty()) md += "Reading: " + reading + ".\n\n";
  md += "![Figure 4](figure4" + sfx + ".png) ![Outcomes per workload](outcome_heatmap" + sfx +
        ".png)\n\n| condition | candidates | outcomes |\n|---|---|---|\n";
  for (const auto& c : g["conditions"]) {
    std::string o;
    int total = 0;
    for (auto& [v, n] : c["outcomes"].items()) total += n.get<int>();
    for (auto& [v, n] : c["outcomes"].items())
      o += (o.empty() ? "" : ", ") + v + " " + std::to_string(n.get<int>()) + " (" +
           fmt("%.0f%%", total ? 100.0 * n.get<int>() / total : 0.0) + ")";
    md += "| " + c["label"].get<std::string>() + " | " + std::to_string(total) + " | " + o + " |\n";
  }
  md += "\nDefinitions: outcome classes are the verdicts of docs/verification.md, in pipeline "
        "order; the heatmap shows each workload's most advanced verdict per condition (correct "
        "beats any failure). CSV: `figure4.csv`.\n\n";
  return md;
}

std::string budget_markdown(const ordered& g, const std::string& sfx) {
  std::string md = "### Budget curves\n\n";
  std::string reading;
  for (const auto& c : g["conditions"]) {
    if (c["curve"].empty()) continue;
    const auto& last = c["curve"].back();
    reading += (reading.empty() ? "" : "; ") + c["label"].get<std::string>() + " at " +
               std::to_string(last["samples_per_workload"].get<int>()) + " per workload: " +
               value_text(last["solved"]["mean"], "%.2f") + " solved, " +
               value_text(last["geomean_speedup"]["mean"], "%.3fx");
  }
  if (!reading.empty()) md += "Reading: " + reading + ".\n\n";
  md += "![Budget curves](budget_curves" + sfx + ".png) ![One curve per method](budget_methods" +
        sfx + ".png) ![Cost against solved](cost_solved" + sfx + ".png)\n\n" + few_seeds_line(g) +
        "Definitions: solved and geomean speedup of the first k candidates of every workload "
        "(prefixes of the recorded searches), mean over seeds with 95% bootstrap bands; one "
        "curve per method uses each method's longest recording; cost is the LLM dollars of the "
        "condition's cells. CSV: `budget_curves.csv`.\n\n";
  return md;
}

std::string spread_text(const ordered& b) {
  std::string s = num_or_dash(b["kernel_ms"], "%.4g") + " ms";
  const auto& band = b["kernel_ms_band"];
  if (band.is_array())
    s += " [" + fmt("%.4g", band[0].get<double>()) + ", " + fmt("%.4g", band[1].get<double>()) +
         "], " + std::to_string(b["timing_runs"].get<int>()) + " runs";
  else
    s += ", timed once";
  const auto& ru = b["runner_up"];
  if (ru.is_object() && ru["bands_overlap"].is_boolean())
    s += ru["bands_overlap"].get<bool>()
             ? "; overlaps the runner-up (" + num_or_dash(ru["speedup"], "%.3fx") + ")"
             : "; clear of the runner-up (" + num_or_dash(ru["speedup"], "%.3fx") + ")";
  const auto& sat = b["sitting"];
  if (sat.is_object())
    s += "; re-timed side by side (" + fmt("%.3fx", sat["evaluated_speedup"].get<double>()) +
         " by its evaluation)" + (sat["unsettled"].get<bool>() ? ", not settled" : "");
  if (b["plausibility"] == "implausible_speed") s += "; **implausible_speed**";
  return s;
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

ordered quarantines_json(const std::vector<ReportQuarantine>& qs) {
  ordered out = ordered::array();
  for (const auto& q : qs)
    out.push_back({{"run_id", q.run_id},
                   {"agent_key", q.agent_key},
                   {"agent_id", q.agent_id},
                   {"reason", q.reason},
                   {"job_id", q.job_id},
                   {"evaluations", q.evaluations}});
  return out;
}

nlohmann::ordered_json sweep_report_json(const SweepReportInput& stored) {
  // Every figure below reads a re-timed search's best from its sitting, as the run report does.
  const SweepReportInput input = with_published_bests(stored);
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
  std::map<std::string, const ReportCandidate*> runner_up;  // timing|w
  ordered suspect = ordered::array();
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
                      {"comparisons", axis_comparisons(mine)},
                      {"table3", table3_json(mine, t, input.hand_tuned)}});
    for (const auto& c : mine)
      for (const auto* cell : c.cells)
        for (const auto& k : cell->candidates) {
          if (k.verdict != Verdict::correct || !k.speedup) continue;
          auto& slot = best_by[t + "|" + k.workload];
          auto& second = runner_up[t + "|" + k.workload];
          // Of equals, the one its sitting published (the others of its search are read at
          // most at its speedup).
          const bool ahead =
              !slot.first || *k.speedup > *slot.first->speedup ||
              (*k.speedup == *slot.first->speedup &&
               k.sitting == ReportCandidate::Sitting::published &&
               slot.first->sitting != ReportCandidate::Sitting::published);
          if (ahead) {
            second = slot.first;
            slot = {&k, cell};
          } else if (!second || *k.speedup > *second->speedup) {
            second = &k;
          }
          auto cost = input.costs.find(k.workload);
          TimingCheck check;
          if (k.kernel_ms && *k.kernel_ms > 0 && *k.speedup > 0)
            check = check_timing(*k.speedup, *k.kernel_ms, t,
                                 cost == input.costs.end() ? std::nullopt
                                                           : std::optional<WorkloadCost>(cost->second));
          const bool flagged = k.plausibility == "implausible_speed" || k.plausibility == "retimed";
          if (!flagged && !check.suspect) continue;
          ordered retiming = ordered::parse(k.retiming_json, nullptr, false);
          suspect.push_back({{"candidate_id", k.id},
                             {"workload", k.workload},
                             {"cell", cell->key},
                             {"timing", t},
                             {"speedup", *k.speedup},
                             {"kernel_ms", k.kernel_ms ? ordered(*k.kernel_ms) : ordered()},
                             {"plausibility", k.plausibility},
                             {"reason", check.suspect ? check.reason
                                                      : std::string("flagged by the judge")},
                             {"retiming", retiming.is_discarded() ? ordered::object() : retiming}});
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
      // A best published by its sitting is ranked against the kernel re-timed beside it.
      const ReportCandidate* next = runner_up[t + "|" + w];
      ordered sitting;
      if (k->sitting == ReportCandidate::Sitting::published) {
        for (const auto& o : cell->candidates)
          if (o.workload == k->workload && o.seed == k->seed &&
              o.sitting == ReportCandidate::Sitting::runner_up)
            next = &o;
        sitting = {{"evaluated_speedup", *k->evaluated_speedup},
                   {"unsettled", k->sitting_unsettled}};
      }
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
                      {"roofline", roofline_json(input.costs, w, t, k->kernel_ms, k->baseline_ms)},
                      {"timing_runs", k->timing_runs},
                      {"kernel_ms_band", band_json(*k)},
                      {"plausibility", k->plausibility},
                      {"runner_up", runner_up_json(*k, next)},
                      {"sitting", sitting},
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
                 {"suspect_timings", suspect},
                 {"quarantined_keys", quarantines_json(input.quarantines)},
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
    md += table2_markdown(g, sfx);
    md += pass_fast_markdown(g, sfx);
    md += comparisons_markdown(g);
    md += table3_markdown(g, sfx);
    md += figure4_markdown(g, sfx);
    md += budget_markdown(g, sfx);
  }

  md += "## Cells\n\n| cell | status | model | timing | seeds | candidates | correct | solved | "
        "geomean speedup | re-timed bests (unsettled) | LLM calls | tokens in / out / thinking | "
        "cost |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
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
          std::to_string(c["sittings"]["published"].get<int>()) + " (" +
          std::to_string(c["sittings"]["unsettled"].get<int>()) + ") | " +
          std::to_string(u["calls"].get<int64_t>()) + " | " +
          std::to_string(u["prompt_tokens"].get<int64_t>()) + " / " +
          std::to_string(u["completion_tokens"].get<int64_t>()) + " / " +
          std::to_string(u["thinking_tokens"].get<int64_t>()) + " | " +
          (u["cost_complete"].get<bool>() ? fmt("$%.4f", u["cost_usd"].get<double>())
                                          : fmt(">= $%.4f (some calls unpriced)", u["cost_usd"].get<double>())) +
          " |\n";
  }
  md += "\nRe-timed bests: the searches (workload and seed) whose best was published by a "
        "side-by-side re-timing of their best two kernels against the baseline in one sitting, "
        "at the faster's speedup there; unsettled: the two bands overlapped there.\n";
  md += "\nCSV: `cells.csv`. Per-workload rows of every cell are in `report.json`.\n\n";
  md += llm_cost_markdown(r["cells"]);

  md += "## Best kernel per workload\n\n| workload | best | cell | timing | kernel time "
        "[interquartile band] | roofline fraction (baseline's) | file |\n"
        "|---|---|---|---|---|---|---|\n";
  bool any_cpu_roof = false;
  for (const auto& w : r["workloads"]) {
    std::string id = w["id"].get<std::string>() + (w["degenerate"].get<bool>() ? "*" : "");
    if (w["best"].empty()) {
      md += "| " + id + " | no correct kernel | - | - | - | - | history: `kernels/" + w["id"].get<std::string>() + ".history.csv` |\n";
      continue;
    }
    for (const auto& b : w["best"]) {
      std::string roof = "-";
      const auto& rf = b["roofline"];
      if (rf.is_object() && !rf["meaningful"].get<bool>()) {
        roof = "not meaningful (CPU host)";
        any_cpu_roof = true;
      } else if (rf.is_object()) {
        roof = fmt("%.1f%%", 100 * rf["fraction"].get<double>()) + " " +
               rf["bound"].get<std::string>() + "-bound" +
               (rf["baseline_fraction"].is_number()
                    ? " (" + fmt("%.1f%%", 100 * rf["baseline_fraction"].get<double>()) + ")"
                    : std::string());
      }
      md += "| " + id + " | " + fmt("%.3fx", b["speedup"].get<double>()) + " | " +
            b["cell"].get<std::string>() + " (seed " + std::to_string(b["seed"].get<int64_t>()) +
            ", sample " + std::to_string(b["sample_index"].get<int>()) + ") | " +
            b["timing"].get<std::string>() + " | " + spread_text(b) + " | " + roof + " | `" +
            b["file"].get<std::string>() +
            "`, history `" + b["history"].get<std::string>() + "` |\n";
    }
  }
  md += "\nRoofline fraction: max(FLOPs / 918 TFLOP/s, bytes / 1.64 TB/s) / measured time, with "
        "the workload's FLOPs and the bytes of its inputs and output at full shapes "
        "(workloads/workload_costs.json) and TPU v6e's peaks (workloads/context/hardware.md); "
        "above 100% is impossible for a kernel that does the work.";
  md += " Kernel time: the median of the timed calls with their interquartile band; \"timed "
        "once\" when the judge recorded no spread. When the best kernel's band overlaps its "
        "runner-up's, the two are not ranked by this timing.";
  if (any_cpu_roof)
    md += " Times measured on a CPU host (cpu-wall, reduced shapes in interpret mode) give a "
          "fraction that is not meaningful, so none is shown for them.";
  md += "\n";
  if (!r["suspect_timings"].empty()) {
    md += "\n## Timings to look at\n\nSpeeds that are hard to believe (above the " +
          fmt("%.0fx", kDefaultSpeedupCeiling) + " ceiling, or above the v6e roofline for a TPU "
          "time), or that the judge re-timed on another slot. implausible_speed: the re-timing "
          "held, so the speed is kept and flagged; retimed: the re-timing replaced the first "
          "timing.\n\n| candidate | workload | cell | timing | speedup | flag | why | both "
          "timings |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& x : r["suspect_timings"]) {
      std::string both = "-";
      const auto& rt = x["retiming"];
      if (rt.contains("first") && rt.contains("second"))
        both = "first " + num_or_dash(rt["first"].value("kernel_ms", ordered()), "%.4g") +
               " ms, second " + num_or_dash(rt["second"].value("kernel_ms", ordered()), "%.4g") +
               " ms";
      md += "| " + std::to_string(x["candidate_id"].get<int64_t>()) + " | " +
            x["workload"].get<std::string>() + " | " + x["cell"].get<std::string>() + " | " +
            x["timing"].get<std::string>() + " | " + fmt("%.3fx", x["speedup"].get<double>()) +
            " | " + (x["plausibility"].get<std::string>().empty() ? "not checked by the judge"
                                                                  : x["plausibility"].get<std::string>()) +
            " | " + x["reason"].get<std::string>() + " | " + both + " |\n";
    }
  }
  if (r.contains("quarantined_keys") && !r["quarantined_keys"].empty()) {
    md += "\n## Quarantined agent keys\n\nAgents whose results another agent contradicted "
          "(docs/verification.md 5.7). A quarantined key got no more work; every result it sent "
          "is marked for re-evaluation and counts here as not evaluated until a resumed run "
          "evaluates it again.\n\n| run | agent | key | caught on candidate | why | results "
          "it sent |\n|---|---|---|---|---|---|\n";
    for (const auto& q : r["quarantined_keys"]) {
      const std::string key = q["agent_key"].get<std::string>();
      md += "| " + std::to_string(q["run_id"].get<int64_t>()) + " | " +
            q["agent_id"].get<std::string>() + " | " +
            (key.empty() ? std::string("(plaintext link: no key)") : "`" + key + "`") + " | " +
            std::to_string(q["job_id"].get<int64_t>()) + " | " + q["reason"].get<std::string>() +
            " | " + std::to_string(q["evaluations"].get<int64_t>()) + " |\n";
    }
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
      "solved_low,solved_high,geomean_speedup,geomean_speedup_low,geomean_speedup_high,iqm_speedup,"
      "iqm_speedup_low,iqm_speedup_high\n";
  std::string pk = "timing,model,condition,k,pass_at_k,low,high,seeds\n";
  std::string fp = "timing,model,condition,p,fast_p,low,high,seeds\n";
  std::string cmp =
      "timing,a,b,axis,workloads,seeds_a,seeds_b,paired,metric,a_value,b_value,diff,low,high\n";
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
      t2 += "," + csv_num(t["iqm_speedup"]["value"]) + "," + csv_num(t["iqm_speedup"]["low"]) + "," +
            csv_num(t["iqm_speedup"]["high"]) + "\n";
      const std::string nseeds = std::to_string(c["seeds"].size());
      for (const auto& p : c["pass_at_k"])
        pk += pre + "," + std::to_string(p["k"].get<int>()) + "," + csv_num(p["estimate"]["value"]) +
              "," + csv_num(p["estimate"]["low"]) + "," + csv_num(p["estimate"]["high"]) + "," +
              nseeds + "\n";
      for (const auto& p : c["fast_p"])
        fp += pre + "," + csv_num(p["p"]) + "," + csv_num(p["estimate"]["value"]) + "," +
              csv_num(p["estimate"]["low"]) + "," + csv_num(p["estimate"]["high"]) + "," + nseeds +
              "\n";
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
    for (const auto& c : g["comparisons"]) {
      const std::string pre = timing + "," + csv_field(c["a"]) + "," + csv_field(c["b"]) + "," +
                              csv_field(c["axis"]) + "," + std::to_string(c["workloads"].size()) +
                              "," + std::to_string(c["seeds_a"].get<int>()) + "," +
                              std::to_string(c["seeds_b"].get<int>()) + "," +
                              (c["paired"].get<bool>() ? "1" : "0");
      for (const char* m : {"geomean_speedup", "iqm_speedup", "solved", "per_sample_correctness"}) {
        const auto& d = c[m];
        cmp += pre + "," + m + "," + csv_num(d["a"]) + "," + csv_num(d["b"]) + "," +
               csv_num(d["diff"]) + "," + csv_num(d["low"]) + "," + csv_num(d["high"]) + "\n";
      }
      const auto& p = c["p_improvement"];
      cmp += pre + ",p_improvement,,," + csv_num(p["value"]) + "," + csv_num(p["low"]) + "," +
             csv_num(p["high"]) + "\n";
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
      "cost_complete," + llm_cost_csv_header() + "\n";
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
             (u["cost_complete"].get<bool>() ? "1" : "0") + "," + llm_cost_csv_row(u) + "\n";
  }
  return {{"table2.csv", t2},      {"table3.csv", t3},   {"figure4.csv", f4},
          {"budget_curves.csv", bc}, {"cells.csv", cells}, {"pass_at_k.csv", pk},
          {"fast_p.csv", fp},        {"comparisons.csv", cmp}};
}

}  // namespace palladium
