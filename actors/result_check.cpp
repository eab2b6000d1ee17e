#include "actors/result_check.hpp"

#include <nlohmann/json.hpp>

namespace palladium {
namespace {

bool is_correct(const Evaluated& r) { return r.evaluation.verdict == Verdict::correct; }

// Verdicts the host can cause on its own: a loaded or short-of-memory machine, a killed
// process. Two agents may honestly differ on them.
bool host_dependent(const Evaluated& r) {
  const Verdict v = r.evaluation.verdict;
  return v == Verdict::timeout || v == Verdict::crash || v == Verdict::resource_exhausted;
}

std::string verdict_of(const Evaluated& r) { return std::string(to_string(r.evaluation.verdict)); }

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json timing_json(const Evaluated& r) {
  return {{"kernel_ms", opt(r.evaluation.kernel_ms)},
          {"baseline_ms", opt(r.evaluation.baseline_ms)},
          {"timing_kind", spelling(r.evaluation.timing_kind)},
          {"agent_id", r.agent.agent_id},
          {"agent_key", r.agent.agent_key}};
}

// The re-timing's figures replace the first timing's, its spread included.
void take_timing(Evaluation& to, const Evaluation& from) {
  to.kernel_ms = from.kernel_ms;
  to.baseline_ms = from.baseline_ms;
  to.timing_kind = from.timing_kind;
  to.timing_runs = from.timing_runs;
  to.kernel_ms_low = from.kernel_ms_low;
  to.kernel_ms_high = from.kernel_ms_high;
  to.baseline_ms_low = from.baseline_ms_low;
  to.baseline_ms_high = from.baseline_ms_high;
}

// Agent-chosen names may hold any bytes: never let them make dump() throw.
std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Agreement compare_results(const Evaluated& a, const Evaluated& b) {
  if (host_dependent(a) || host_dependent(b)) return Agreement::inconclusive;
  return is_correct(a) == is_correct(b) ? Agreement::agree : Agreement::disagree;
}

ResultChecks::ResultChecks(ResultCheckOptions options)
    : options_(std::move(options)),
      rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

TimingCheck ResultChecks::timing_check(const Evaluated& r, const std::string& workload) const {
  auto ratio = speedup(r.evaluation);
  if (!ratio) return {};
  auto cost = options_.costs.find(workload);
  return check_timing(*ratio, *r.evaluation.kernel_ms, spelling(r.evaluation.timing_kind),
                      cost == options_.costs.end() ? std::nullopt
                                                   : std::optional<WorkloadCost>(cost->second),
                      options_.speedup_ceiling);
}

FirstLook ResultChecks::first_look(const Evaluated& first, const std::string& workload,
                                   int64_t job_id) {
  FirstLook look;
  look.workload = workload;
  look.job_id = job_id;
  // Drawn for every result, whatever its verdict, so the share is of all results and the
  // draws do not depend on what the agents answered.
  if (options_.share > 0) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    look.sampled = u(rng_) < options_.share;
  }
  look.timing = timing_check(first, workload);
  return look;
}

std::string ResultChecks::plausibility_of(const Evaluated& r, const std::string& workload) const {
  if (!speedup(r.evaluation)) return "";
  return timing_check(r, workload).suspect ? to_string(Plausibility::implausible_speed)
                                 : to_string(Plausibility::plausible);
}

CheckDecision ResultChecks::decide(const FirstLook& look, const std::vector<Opinion>& opinions,
                                   bool third_available) const {
  CheckDecision d;
  const Opinion& first = opinions.at(0);
  nlohmann::json cross = nlohmann::json::object();
  cross["reason"] = look.sampled ? (look.timing.suspect ? "sampled, suspect timing" : "sampled")
                                 : "suspect timing";
  nlohmann::json views = nlohmann::json::array();
  for (const auto& o : opinions)
    views.push_back({{"agent_id", o.result.agent.agent_id},
                     {"agent_key", o.result.agent.agent_key},
                     {"verdict", verdict_of(o.result)}});
  cross["opinions"] = views;

  // Which opinion is answered, and which correct result re-times a suspect first timing.
  const Opinion* answer = &first;
  const Opinion* retime = nullptr;
  std::string agreement;
  if (opinions.size() == 1) {
    agreement = "unchecked: no other slot could take it";
  } else if (opinions.size() == 2) {
    const Opinion& second = opinions[1];
    Agreement a = compare_results(first.result, second.result);
    if (second.peer == first.peer) {
      // Another slot of the same agent: a re-timing, which proves nothing about the verdict.
      agreement = "same agent (re-timing only)";
      if (a == Agreement::agree && is_correct(first.result)) retime = &second;
    } else if (a == Agreement::agree) {
      agreement = "agree";
      if (is_correct(first.result)) retime = &second;
    } else if (a == Agreement::inconclusive) {
      agreement = "inconclusive";
    } else if (third_available) {
      d.need_tiebreak = true;
      return d;
    } else {
      agreement = "disagree, no third agent";
      const Opinion& claimer = is_correct(first.result) ? first : second;
      answer = is_correct(first.result) ? &second : &first;
      d.quarantine.emplace_back(claimer.peer,
                                "claimed correct for job " + std::to_string(look.job_id) +
                                    " where agent " + answer->result.agent.agent_id + " found " +
                                    verdict_of(answer->result));
    }
  } else {
    const Opinion& second = opinions[1];
    const Opinion& third = opinions[2];
    Agreement with_first = compare_results(third.result, first.result);
    Agreement with_second = compare_results(third.result, second.result);
    const Opinion* outvoted = nullptr;
    if (with_first == Agreement::agree && with_second == Agreement::disagree) {
      outvoted = &second;
      answer = &first;
      if (is_correct(first.result)) retime = &third;
    } else if (with_second == Agreement::agree && with_first == Agreement::disagree) {
      outvoted = &first;
      answer = &second;
    } else {
      // The tie-breaker proved nothing (a host-dependent verdict): the no-third-agent rule.
      outvoted = is_correct(first.result) ? &first : &second;
      answer = is_correct(first.result) ? &second : &first;
    }
    agreement = "disagree, outvoted 2 to 1";
    if (with_first != Agreement::agree && with_second != Agreement::agree)
      agreement = "disagree, tie-break inconclusive";
    d.quarantine.emplace_back(outvoted->peer,
                              "outvoted on job " + std::to_string(look.job_id) +
                                  ": said " + verdict_of(outvoted->result) + ", the others " +
                                  verdict_of(answer->result));
  }
  cross["agreement"] = agreement;
  if (!d.quarantine.empty()) {
    const Opinion* q = nullptr;
    for (const auto& o : opinions)
      if (o.peer == d.quarantine[0].first) q = &o;
    cross["quarantined"] = {{"agent_id", q ? q->result.agent.agent_id : ""},
                            {"agent_key", q ? q->result.agent.agent_key : ""}};
  }

  d.answer = answer->result;
  CheckFindings& found = d.answer.checks;
  if (opinions.size() > 1 || look.sampled) found.cross_check_json = dump(cross);
  if (answer == &first && look.timing.suspect && is_correct(first.result)) {
    nlohmann::json both = {{"first", timing_json(first.result)}, {"reason", look.timing.reason}};
    if (retime != nullptr) {
      both["second"] = timing_json(retime->result);
      GateDecision gate = resolve_retiming(timing_check(retime->result, look.workload));
      found.plausibility = to_string(gate.outcome);
      if (gate.publish_second) take_timing(d.answer.evaluation, retime->result.evaluation);
    } else {
      // Nothing re-timed it (no slot, or the second run did not get to a timing): the speed is
      // kept and flagged for a person to look at.
      both["second"] = nullptr;
      found.plausibility = to_string(Plausibility::implausible_speed);
    }
    found.retiming_json = dump(both);
  } else {
    found.plausibility = plausibility_of(d.answer, look.workload);
  }
  return d;
}

}  // namespace palladium
