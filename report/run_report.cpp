#include "report/run_report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "analysis/fast_p.hpp"
#include "analysis/metrics.hpp"
#include "analysis/pass_at_k.hpp"
#include "report/llm_usage_report.hpp"
#include "report/published_best.hpp"

namespace palladium {

namespace {

const std::string kCpuWall(to_string(TimingKind::cpu_wall));
const std::string kTpuProfiler(to_string(TimingKind::tpu_profiler));
const std::string kTpuWallFallback(to_string(TimingKind::tpu_wall_fallback));

constexpr const char* kMetricDefinitions =
    "Metrics (as defined by the JAXBench study; README.md, Metrics): per-sample correctness = correct / all generated "
    "candidates (no extractable code counts as generated and wrong); solved "
    "= workloads with >= 1 correct candidate; speedup(w) = baseline time / "
    "best correct time, 1.0 when none is correct; suite speedup = geomean "
    "over all workloads of max(speedup(w), 1.0); pass@k = mean over workloads of "
    "1 - C(n-c, k) / C(n, k); fast_p = share of workloads whose best correct kernel is more than "
    "p times faster than the baseline; study = correct by the numerics alone (the structure rule "
    "and exact dtype not required).";

constexpr const char* kCpuWarning =
    "WARNING: timing is cpu-wall: speedups are CPU interpret-mode wall-clock "
    "ratios, NOT TPU speedups.";

constexpr const char* kTpuWallWarning =
    "WARNING: timing is tpu-wall-fallback: some TPU times are host wall clock "
    "(the profiler trace had no device events), which includes dispatch "
    "overhead; treat these speedups as lower bounds.";

// One workload's candidates in one search phase (Autocomp's translate or
// optimise), so a report can show what each phase found.
struct PhaseSummary {
  int candidates = 0;  // evaluated ones
  int correct = 0;
  std::optional<double> best_speedup;    // of the correct ones
  std::optional<double> best_kernel_ms;  // of the correct ones
};

// Everything the two renderings share.
// A workload's best correct kernel and its runner-up, when their timing bands overlap: the
// ranking between them is within the noise of the timings behind it.
struct Unsettled {
  std::string workload;
  double best = 0, best_low = 0, best_high = 0;
  double runner_up = 0, runner_low = 0, runner_high = 0;
};

struct ReportData {
  RunRecord run;
  std::vector<std::string> models;  // distinct llm_calls.model, in first-call order
  std::vector<WorkloadSummary> workloads;
  SuiteSummary suite;
  // The same under the study's definition of correct: numerics within tolerance, whatever the
  // structure rule and the dtype said (docs/verification.md §1e).
  std::vector<WorkloadSummary> study_workloads;
  SuiteSummary study_suite;
  std::vector<Unsettled> unsettled;
  std::map<std::string, SittingView> sittings;  // by workload
  std::string timing;
  int pending = 0;  // candidates without an evaluation
  // Correct candidates whose numerics rest on the CPU branch alone, which the candidate's own
  // process built (the judge could not interpret their kernels): only a TPU run confirms them.
  int correct_cpu_branch_only = 0;
  // Correct candidates whose numerics ran at the workload's reduced shapes only (a CPU host
  // without evaluation.full_shapes): a kernel wrong only at the full shapes passes those.
  int correct_reduced_shapes_only = 0;
  // workload -> phase -> summary, only for phases other than the iterative
  // methods' single one.
  std::map<std::string, std::map<std::string, PhaseSummary>> phases;
};

// Per workload, its latest held sitting that re-timed its best kernel by the evaluations (a
// sitting of another seed's search, or one not held, says nothing about the published best).
std::map<std::string, SittingView> sittings_of(
    const std::vector<SittingRecord>& rows,
    const std::map<std::string, std::pair<double, int64_t>>& best_of) {
  std::map<std::string, SittingView> out;
  for (const auto& s : rows) {
    auto best = best_of.find(s.workload);
    if (best == best_of.end()) continue;
    if (auto v = published_by_sitting(s, best->second.second))
      out[s.workload] = std::move(*v);  // later sittings replace earlier ones
  }
  return out;
}

ReportData collect(const RunStore& store, int64_t run_id,
                   std::vector<std::string> workload_ids) {
  auto run = store.find_run(run_id);
  if (!run) {
    throw StoreError("run store '" + store.path() + "': no run " +
                     std::to_string(run_id));
  }
  const std::vector<SampleRecord> candidates = store.candidates(run_id, RunStore::Texts::none);
  const std::vector<EvaluationRecord> evaluations = store.evaluations(run_id);

  if (workload_ids.empty()) {
    std::set<std::string> seen;
    for (const auto& c : candidates) {
      if (seen.insert(c.workload).second) workload_ids.push_back(c.workload);
    }
  }

  std::unordered_map<int64_t, const SampleRecord*> by_id;
  for (const auto& c : candidates) by_id[c.id] = &c;

  std::vector<CandidateResult> results, study_results;
  // workload -> (speedup, candidate id) of its best correct candidate by the evaluations
  std::map<std::string, std::pair<double, int64_t>> best_of;
  // workload -> (speedup, its band) of the correct candidates timed with a spread
  std::map<std::string, std::vector<std::array<double, 3>>> banded;
  std::map<std::string, std::map<std::string, PhaseSummary>> phases;
  bool any_timing = false, all_tpu = true, any_cpu = false;
  int cpu_branch_only = 0, reduced_shapes_only = 0;
  for (const auto& row : evaluations) {
    const Evaluation& e = row.evaluation;
    auto it = by_id.find(row.candidate_id);
    if (it == by_id.end()) continue;  // not possible with foreign keys on
    results.push_back({it->second->workload, e.verdict, row.speedup});
    if (e.verdict == Verdict::correct && row.speedup) {
      auto [b, fresh] = best_of.try_emplace(it->second->workload, *row.speedup, row.candidate_id);
      if (!fresh && *row.speedup > b->second.first) b->second = {*row.speedup, row.candidate_id};
    }
    const bool study_correct = e.verdict == Verdict::correct || e.numerics_ok.value_or(false);
    study_results.push_back(
        {it->second->workload, study_correct ? Verdict::correct : e.verdict, row.speedup});
    // A speedup's band: the baseline's median over the kernel's band (both timed in one sitting).
    if (e.verdict == Verdict::correct && row.speedup && e.baseline_ms && e.kernel_ms_low &&
        e.kernel_ms_high && *e.kernel_ms_low > 0 && *e.kernel_ms_high > 0)
      banded[it->second->workload].push_back(
          {*row.speedup, *e.baseline_ms / *e.kernel_ms_high, *e.baseline_ms / *e.kernel_ms_low});
    if (e.verdict == Verdict::correct && e.numerics_path == NumericsPath::cpu_branch_only)
      cpu_branch_only++;
    if (e.verdict == Verdict::correct &&
        (e.numerics_path == NumericsPath::cpu_branch_only || e.numerics_path == NumericsPath::mosaic_interpreter))
      reduced_shapes_only++;
    if (it->second->phase != Phase::iterate) {
      PhaseSummary& ph =
          phases[it->second->workload][std::string(to_string(it->second->phase))];
      ph.candidates++;
      if (e.verdict == Verdict::correct) {
        ph.correct++;
        if (row.speedup && (!ph.best_speedup || *row.speedup > *ph.best_speedup))
          ph.best_speedup = row.speedup;
        if (e.kernel_ms && (!ph.best_kernel_ms || *e.kernel_ms < *ph.best_kernel_ms))
          ph.best_kernel_ms = e.kernel_ms;
      }
    }
    // Only a timed candidate says how this run was timed: a failed one
    // carries whatever its agent stamped, and must not turn a TPU report
    // into a CPU one (issue 8 item 5).
    if (e.timing_kind && e.kernel_ms) {
      any_timing = true;
      if (e.timing_kind != TimingKind::tpu_profiler) all_tpu = false;
      if (e.timing_kind == TimingKind::cpu_wall) any_cpu = true;
    }
  }

  ReportData data;
  data.run = std::move(*run);
  data.models = store.models(run_id);
  data.workloads = summarize_workloads(workload_ids, results);
  data.study_workloads = summarize_workloads(workload_ids, study_results);
  data.study_suite = summarize_suite(data.study_workloads);
  data.sittings = sittings_of(store.sittings(run_id), best_of);
  for (const auto& [workload, view] : data.sittings) {
    // The published best of a re-timed workload is the faster by the sitting.
    for (auto& w : data.workloads)
      if (w.id == workload) w.best_speedup = view.speedup(view.faster);
    banded.erase(workload);  // its overlap is the sitting's (below), not the evaluations'
    if (view.overlap) {
      const size_t a = view.faster, b = 1 - view.faster;
      data.unsettled.push_back(
          {workload, view.speedup(a), view.baseline_ms / view.kernel_high[a],
           view.baseline_ms / view.kernel_low[a], view.speedup(b),
           view.baseline_ms / view.kernel_high[b], view.baseline_ms / view.kernel_low[b]});
    }
  }
  // After the sittings: the suite's figures follow the published bests.
  data.suite = summarize_suite(data.workloads);
  for (auto& [workload, timed] : banded) {
    if (timed.size() < 2) continue;
    std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a[0] > b[0]; });
    if (timed[0][1] <= timed[1][2])
      data.unsettled.push_back({workload, timed[0][0], timed[0][1], timed[0][2], timed[1][0],
                                timed[1][1], timed[1][2]});
  }
  // The weakest timing present names the whole report: one CPU number makes
  // every speedup in it a CPU number.
  if (!any_timing || any_cpu)
    data.timing = kCpuWall;
  else
    data.timing = all_tpu ? kTpuProfiler : kTpuWallFallback;
  data.pending = static_cast<int>(candidates.size() - results.size());
  data.correct_cpu_branch_only = cpu_branch_only;
  data.correct_reduced_shapes_only = reduced_shapes_only;
  data.phases = std::move(phases);
  return data;
}

// How the text report names a model: the offline ones say what they are, so their results
// are never read as an LLM's.
std::string model_line(const std::string& model) {
  if (model == "synthetic") {
    return "model: synthetic (the offline synthetic model of llm/synthetic/, not an LLM; its "
           "slip rates are set to mimic the study)";
  }
  if (model == "replay") return "model: replay (recorded responses of llm/replay_corpus/)";
  return "model: " + model;
}

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json phases_json(const std::map<std::string, PhaseSummary>& phases) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, ph] : phases) {
    out[name] = {{"candidates", ph.candidates},
                 {"correct", ph.correct},
                 {"best_speedup", optional_json(ph.best_speedup)},
                 {"best_kernel_ms", optional_json(ph.best_kernel_ms)}};
  }
  return out;
}

std::string phase_cell(const std::map<std::string, PhaseSummary>& phases, const std::string& name) {
  auto it = phases.find(name);
  if (it == phases.end()) return "-";
  const PhaseSummary& ph = it->second;
  std::string cell = std::to_string(ph.correct) + "/" + std::to_string(ph.candidates);
  if (ph.best_speedup) cell += " best " + fmt("%.3fx", *ph.best_speedup);
  return cell;
}


// {"1": pass@1, "5": ..., "10": ...}; null where some workload has fewer candidates than k. Over
// the run's pooled candidates of each workload (all methods and seeds).
nlohmann::json pass_at_k_json(const std::vector<WorkloadSummary>& workloads) {
  std::vector<PassCount> counts;
  for (const auto& w : workloads) counts.push_back({w.candidates, w.correct});
  nlohmann::json out = nlohmann::json::object();
  for (int k : kPassAtK) {
    auto v = suite_pass_at_k(counts, k);
    out[std::to_string(k)] = v ? nlohmann::json(*v) : nlohmann::json();
  }
  return out;
}

// {"0": fast_0, "1.0": ..., "2.0": ...}.
nlohmann::json fast_p_json(const std::vector<WorkloadSummary>& workloads) {
  nlohmann::json out = nlohmann::json::object();
  for (double p : kFastP) out[fmt(p == 0.0 ? "%.0f" : "%.1f", p)] = fast_p(workloads, p);
  return out;
}
}  // namespace

InputSensitivity load_input_sensitivity(const std::filesystem::path& path) {
  InputSensitivity table;
  std::ifstream in(path);
  if (!in) return table;
  try {
    auto doc = nlohmann::json::parse(in);
    for (const auto& [id, row] : doc.at("workloads").items()) {
      auto inputs = row.at("insensitive_inputs").get<std::vector<std::string>>();
      if (row.at("degenerate").get<bool>() != !inputs.empty())
        throw StoreError(path.string() + ": workload " + id +
                         ": 'degenerate' disagrees with 'insensitive_inputs'");
      table[id] = std::move(inputs);
    }
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(path.string() + ": not an input-sensitivity table: " + e.what());
  }
  return table;
}

int study_correct_of(const ReportData& d, const std::string& workload) {
  for (const auto& w : d.study_workloads)
    if (w.id == workload) return w.correct;
  return 0;
}

nlohmann::json unsettled_json(const std::vector<Unsettled>& unsettled) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& u : unsettled)
    out.push_back({{"workload", u.workload},
                   {"best", u.best},
                   {"best_band", {u.best_low, u.best_high}},
                   {"runner_up", u.runner_up},
                   {"runner_up_band", {u.runner_low, u.runner_high}}});
  return out;
}

nlohmann::json sitting_json(const SittingView& v) {
  return {{"candidates", v.candidates},
          {"kernel_ms", v.kernel_ms},
          {"kernel_ms_band", {v.kernel_low, v.kernel_high}},
          {"baseline_ms", v.baseline_ms},
          {"speedups", {v.speedup(0), v.speedup(1)}},
          {"published_candidate", v.candidates[v.faster]},
          {"switched", v.switched},
          {"unsettled", v.overlap},
          {"timing_runs", v.timing_runs},
          {"timing_kind", v.timing_kind}};
}

// "  8p: re-timed side by side (5 rounds, cpu-wall): candidate 12 1.210x [1.190, 1.230] against
// candidate 15 1.180x [...]; published: candidate 12; the bands overlap: not settled"
std::string sitting_line(const std::string& workload, const SittingView& v) {
  auto side = [&](size_t i) {
    return "candidate " + std::to_string(v.candidates[i]) + " " + fmt("%.3fx", v.speedup(i)) +
           " [" + fmt("%.3f", v.baseline_ms / v.kernel_high[i]) + ", " +
           fmt("%.3f", v.baseline_ms / v.kernel_low[i]) + "]";
  };
  std::string line = "  " + workload + ": re-timed side by side (" +
                     std::to_string(v.timing_runs) + " rounds, " + v.timing_kind + "): " +
                     side(0) + " against the runner-up " + side(1) + "; published: candidate " +
                     std::to_string(v.candidates[v.faster]);
  if (v.switched) line += " (the sitting reversed the evaluations' order)";
  line += v.overlap ? "; the bands overlap: which is faster is not settled" : "";
  return line + "\n";
}

nlohmann::json report_json(const RunStore& store, int64_t run_id,
                           const std::vector<std::string>& workload_ids,
                           const InputSensitivity& sensitivity) {
  const ReportData d = collect(store, run_id, workload_ids);
  nlohmann::json workloads = nlohmann::json::array();
  nlohmann::json degenerate = nlohmann::json::array();
  for (const auto& w : d.workloads) {
    auto it = sensitivity.find(w.id);
    auto ignored = it == sensitivity.end() ? std::vector<std::string>{} : it->second;
    if (!ignored.empty()) degenerate.push_back(w.id);
    nlohmann::json row = {{"id", w.id},
                          {"candidates", w.candidates},
                          {"correct", w.correct},
                          {"study_correct", study_correct_of(d, w.id)},
                          {"best_speedup", w.best_speedup},
                          {"verdicts", w.verdicts},
                          {"degenerate", !ignored.empty()},
                          {"insensitive_inputs", ignored}};
    auto ph = d.phases.find(w.id);
    if (ph != d.phases.end()) row["phases"] = phases_json(ph->second);
    auto sat = d.sittings.find(w.id);
    if (sat != d.sittings.end()) row["sitting"] = sitting_json(sat->second);
    workloads.push_back(std::move(row));
  }
  return {
      {"run",
       {{"id", d.run.id},
        {"name", d.run.name},
        {"status", d.run.status},
        {"models", d.models}}},
      {"suite",
       {{"workloads", d.suite.workloads},
        {"candidates", d.suite.candidates},
        {"correct", d.suite.correct},
        {"per_sample_correctness", d.suite.per_sample_correctness},
        {"solved", d.suite.solved},
        {"geomean_speedup", d.suite.geomean_speedup},
        {"timing", d.timing},
        {"correct_cpu_branch_only", d.correct_cpu_branch_only},
        {"correct_reduced_shapes_only", d.correct_reduced_shapes_only},
        {"degenerate_workloads", degenerate},
        {"pass_at_k", pass_at_k_json(d.workloads)},
        {"fast_p", fast_p_json(d.workloads)},
        {"study_definition",
         {{"correct", d.study_suite.correct},
          {"per_sample_correctness", d.study_suite.per_sample_correctness},
          {"solved", d.study_suite.solved}}},
        {"unsettled_rankings", unsettled_json(d.unsettled)}}},
      {"workloads", workloads},
      {"llm", llm_usage_json(summarize_llm_usage(store, run_id))},
  };
}

std::string report_text(const RunStore& store, int64_t run_id,
                        const std::vector<std::string>& workload_ids,
                        const InputSensitivity& sensitivity) {
  const ReportData d = collect(store, run_id, workload_ids);
  std::string out = "Run " + std::to_string(d.run.id) + " \"" + d.run.name +
                    "\" (" + d.run.status + ")\n";
  for (const auto& m : d.models) out += model_line(m) + "\n";
  out += "\n";

  size_t id_width = 8;
  for (const auto& w : d.workloads) id_width = std::max(id_width, w.id.size() + 1);
  id_width += 2;
  out += pad("workload", id_width) + pad("candidates", 12) +
         pad("correct", 9) + pad("study", 7) + pad("speedup", 10) + "verdicts\n";
  for (const auto& w : d.workloads) {
    std::string verdicts;
    for (const auto& [name, count] : w.verdicts) {
      if (!verdicts.empty()) verdicts += ' ';
      verdicts += name + "=" + std::to_string(count);
    }
    auto flag = sensitivity.find(w.id);
    bool degenerate = flag != sensitivity.end() && !flag->second.empty();
    std::string row = pad(w.id + (degenerate ? "*" : ""), id_width) +
                      pad(std::to_string(w.candidates), 12) +
                      pad(std::to_string(w.correct), 9) +
                      pad(std::to_string(study_correct_of(d, w.id)), 7) +
                      pad(fmt("%.3fx", w.best_speedup), 10) + verdicts;
    row.erase(row.find_last_not_of(' ') + 1);
    out += row + "\n";
  }
  for (const auto& w : d.workloads) {
    auto flag = sensitivity.find(w.id);
    if (flag == sensitivity.end() || flag->second.empty()) continue;
    std::string inputs;
    for (const auto& name : flag->second) inputs += (inputs.empty() ? "" : ", ") + name;
    out += "  * " + w.id + " is degenerate: its reference ignores " + inputs +
           " (docs/verification.md); a speedup there is not meaningful.\n";
  }

  if (!d.phases.empty()) {
    out += "\nBy phase (correct/evaluated, best correct speedup):\n";
    out += pad("workload", id_width) + pad("translate", 22) + "optimise\n";
    for (const auto& w : d.workloads) {
      auto ph = d.phases.find(w.id);
      if (ph == d.phases.end()) continue;
      out += pad(w.id, id_width) + pad(phase_cell(ph->second, "translate"), 22) +
             phase_cell(ph->second, "optimise") + "\n";
    }
  }

  const SuiteSummary& s = d.suite;
  out += "\nSuite: " + std::to_string(s.workloads) + " workloads, " +
         std::to_string(s.candidates) + " candidates, " +
         std::to_string(s.correct) + " correct\n";
  out += "  per-sample correctness  " +
         fmt("%.1f%%", 100.0 * s.per_sample_correctness) + " (" +
         std::to_string(s.correct) + "/" + std::to_string(s.candidates) +
         ")\n";
  out += "  solved                  " + std::to_string(s.solved) + "/" +
         std::to_string(s.workloads) + "\n";
  const SuiteSummary& study = d.study_suite;
  out += "  study definition        per-sample correctness " +
         fmt("%.1f%%", 100.0 * study.per_sample_correctness) + " (" +
         std::to_string(study.correct) + "/" + std::to_string(study.candidates) + "), solved " +
         std::to_string(study.solved) + "/" + std::to_string(study.workloads) +
         " (column 'study': numerics within tolerance, structure rule and exact dtype not "
         "required)\n";
  out += "  geomean speedup         " + fmt("%.3fx", s.geomean_speedup) +
         " (timing: " + d.timing + ")\n";
  {
    std::vector<PassCount> counts;
    for (const auto& w : d.workloads) counts.push_back({w.candidates, w.correct});
    std::string pass;
    for (int k : kPassAtK)
      if (auto v = suite_pass_at_k(counts, k))
        pass += (pass.empty() ? "" : ", ") + ("pass@" + std::to_string(k)) + " " + fmt("%.3f", *v);
    if (!pass.empty()) out += "  pass@k                  " + pass + "\n";
    std::string fast;
    for (double p : kFastP)
      fast += (fast.empty() ? "" : ", ") + fmt(p == 0.0 ? "fast_%.0f" : "fast_%.1f", p) + " " +
              fmt("%.3f", fast_p(d.workloads, p));
    out += "  fast_p                  " + fast + "\n";
  }
  if (d.correct_cpu_branch_only > 0) {
    out += "  of the correct, " + std::to_string(d.correct_cpu_branch_only) +
           " were checked by their CPU branch alone (the judge could not interpret their "
           "kernels; only a TPU run confirms them: docs/verification.md 0)\n";
  }
  if (d.correct_reduced_shapes_only > 0) {
    out += "  of the correct, " + std::to_string(d.correct_reduced_shapes_only) +
           " were run at the reduced shapes only (a CPU host without evaluation.full_shapes; "
           "a kernel wrong only at the full shapes passes there: docs/verification.md 0)\n";
  }
  for (const auto& [workload, view] : d.sittings) out += sitting_line(workload, view);
  for (const auto& u : d.unsettled) {
    if (d.sittings.count(u.workload)) continue;  // said by its sitting's line
    out += "  " + u.workload + ": the best " + fmt("%.3fx", u.best) + " [" +
           fmt("%.3f", u.best_low) + ", " + fmt("%.3f", u.best_high) + "] and the runner-up " +
           fmt("%.3fx", u.runner_up) + " [" + fmt("%.3f", u.runner_low) + ", " +
           fmt("%.3f", u.runner_high) + "] overlap: which is faster is not settled\n";
  }
  if (d.pending > 0) {
    out += "  not yet evaluated       " + std::to_string(d.pending) +
           " candidates (left out of every number above)\n";
  }
  out += llm_usage_text(summarize_llm_usage(store, run_id));
  out += "\n";
  out += kMetricDefinitions;
  out += "\n";
  if (d.timing == kCpuWall) {
    out += kCpuWarning;
    out += "\n";
  } else if (d.timing == kTpuWallFallback) {
    out += kTpuWallWarning;
    out += "\n";
  }
  return out;
}

}  // namespace palladium
