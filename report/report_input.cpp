#include "report/report_input.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "config/run_config.hpp"
#include "report/llm_usage_report.hpp"

namespace palladium {
namespace {

// budget_per_workload x workloads x seeds of a stored config (defaults as RunConfig's).
int64_t planned_of(const std::string& config_text, const std::vector<std::string>& suite) {
  try {
    auto root = YAML::Load(config_text);
    int64_t budget = root["budget_per_workload"] ? root["budget_per_workload"].as<int64_t>() : 8;
    int64_t seeds = root["seeds"] && root["seeds"].IsSequence() ? root["seeds"].size() : 1;
    return budget * static_cast<int64_t>(suite.size()) * seeds;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

void fill_run(const RunStore& store, const RunRecord& run, const std::string& origin,
              ReportCell& cell) {
  cell.run_id = run.id;
  cell.status = run.status;
  cell.status_reason = run.status_reason;
  cell.method = run.method;
  cell.model = run.model;
  cell.suite = stored_suite(run.suite, origin);
  cell.planned = planned_of(run.config_text, cell.suite);
  std::map<int64_t, const EvaluationRecord*> evals;
  auto evaluations = store.evaluations(run.id);
  for (const auto& e : evaluations) evals[e.candidate_id] = &e;
  for (const auto& s : store.candidates(run.id, RunStore::Texts::none)) {
    ReportCandidate c;
    c.id = s.id;
    c.workload = s.workload;
    c.seed = s.seed;
    c.sample_index = s.sample_index;
    // A result of a quarantined key is not trusted: it reads as not evaluated.
    if (auto it = evals.find(s.id); it != evals.end() && !it->second->needs_reevaluation) {
      const EvaluationRecord& row = *it->second;
      const Evaluation& e = row.evaluation;
      c.verdict = e.verdict;
      c.speedup = row.speedup;
      c.kernel_ms = e.kernel_ms;
      c.baseline_ms = e.baseline_ms;
      c.timing_kind = spelling(e.timing_kind);
      c.timing_runs = e.timing_runs;
      c.kernel_ms_low = e.kernel_ms_low;
      c.kernel_ms_high = e.kernel_ms_high;
      c.plausibility = row.checks.plausibility;
      c.retiming_json = row.checks.retiming_json;
    }
    cell.candidates.push_back(std::move(c));
  }
  cell.sittings = store.sittings(run.id);
  for (const auto& call : store.llm_calls(run.id)) {
    auto& u = cell.usage;
    ++u.calls;
    u.prompt_tokens += call.prompt_tokens;
    u.completion_tokens += call.completion_tokens;
    u.thinking_tokens += call.thinking_tokens;
    if (call.cost_usd)
      u.cost_usd += *call.cost_usd;
    else if (call.provider != "replay" && call.provider != "synthetic" &&
             call.provider != "hand_tuned")
      u.cost_complete = false;  // an API call without a price
  }
  const LlmUsageSummary who = summarize_llm_usage(store, run.id);
  auto& u = cell.usage;
  u.cached_prompt_tokens = who.cached_prompt_tokens;
  u.cache_saved_usd = who.cache_saved_usd;
  u.paid_prompt_tokens = who.paid_prompt_tokens;
  u.paid_output_tokens = who.paid_output_tokens;
  u.reused_prompt_tokens = who.reused_prompt_tokens;
  u.reused_output_tokens = who.reused_output_tokens;
  u.paid_usd = who.paid_usd;
  u.reused_usd = who.reused_usd;
  u.truncated = who.truncated;
}

}  // namespace

std::vector<std::string> stored_suite(const std::vector<std::string>& suite,
                                      const std::string& origin) {
  if (suite.empty())
    throw ConfigError(origin + ": workloads: the stored config has no readable, non-empty "
                               "workload list");
  return suite;
}

SweepReportInput collect_report_input(const RunStore& store, std::optional<int64_t> sweep_id,
                                      const InputSensitivity& sensitivity) {
  SweepReportInput in;
  in.sensitivity = sensitivity;
  for (const auto& q : store.quarantines())
    in.quarantines.push_back(
        ReportQuarantine{q.run_id, q.agent_key, q.agent_id, q.reason, q.job_id, q.evaluations});
  if (!sweep_id) {
    auto sweeps = store.sweeps();
    if (!sweeps.empty()) sweep_id = sweeps.back().id;
  }
  auto runs = store.runs();
  if (!sweep_id) {
    in.title = store.path();
    for (const auto& run : runs) {
      ReportCell cell;
      cell.key = "run-" + std::to_string(run.id);
      cell.ordinal = static_cast<int>(in.cells.size());
      fill_run(store, run, store.path() + " (stored config of run " + std::to_string(run.id) + ")",
               cell);
      in.cells.push_back(std::move(cell));
    }
    return in;
  }
  auto sweep = store.find_sweep(*sweep_id);
  if (!sweep) throw StoreError("run store '" + store.path() + "': no sweep " + std::to_string(*sweep_id));
  in.title = sweep->name;
  for (const auto& rec : store.cells(*sweep_id)) {
    ReportCell cell;
    cell.key = rec.cell_key;
    cell.ordinal = rec.ordinal;
    auto params = nlohmann::ordered_json::parse(rec.params_json, nullptr, false);
    if (params.is_object())
      for (auto& [k, v] : params.items())
        cell.params.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    cell.method = rec.method;
    cell.model = rec.model;
    const RunRecord* latest = nullptr;
    for (const auto& r : runs)
      if (r.cell_id == rec.id && (!latest || r.id > latest->id)) latest = &r;
    const std::string origin = store.path() + " (cell " + rec.cell_key + ")";
    if (latest)
      fill_run(store, *latest, origin, cell);
    else
      cell.suite = stored_suite(rec.suite, origin);
    cell.planned = planned_of(rec.config_text, cell.suite);
    if (rec.cell_key == kReferenceCellKey) {
      for (const auto& c : cell.candidates)
        if (c.verdict && (!in.hand_tuned.count(c.workload) || c.sample_index == 0))
          in.hand_tuned[c.workload] = c;
      continue;
    }
    in.cells.push_back(std::move(cell));
  }
  return in;
}

}  // namespace palladium
