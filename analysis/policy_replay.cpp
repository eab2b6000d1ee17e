#include "analysis/policy_replay.hpp"

#include <climits>
#include <stdexcept>

#include "analysis/metrics.hpp"

namespace palladium {
namespace {

[[noreturn]] void bad(const std::string& spec, const std::string& what) {
  throw std::invalid_argument("policy '" + spec + "': " + what +
                              " (expected prefix:K, early-stop:P or "
                              "realloc:K[,patience=P][,give_up=G])");
}

int positive_int(const std::string& spec, const std::string& name, const std::string& text) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 1 || v > 1000000)
    bad(spec, name + " must be a whole number >= 1, not '" + text + "'");
  return static_cast<int>(v);
}

// One workload's progress through its recording.
struct Track {
  const std::vector<TrajectoryStep>* recorded = nullptr;
  int taken = 0;
  bool solved = false;
  bool timed = false;  // has a correct candidate with a speedup
  double best = 1.0;
  int since_gain = 0;  // candidates since the last gain (first correct, or faster)
  bool retired = false;
  bool censored = false;

  size_t available() const { return recorded ? recorded->size() : 0; }

  // Buys the next recorded candidate; false (and censored) if there is none.
  bool buy() {
    if (static_cast<size_t>(taken) >= available()) {
      censored = true;
      retired = true;
      return false;
    }
    const TrajectoryStep& s = (*recorded)[static_cast<size_t>(taken++)];
    bool gain = false;
    if (s.verdict == Verdict::correct) {
      gain = !solved;  // the first correct candidate
      solved = true;
      if (s.speedup && (!timed || *s.speedup > best)) {
        gain = true;  // or a faster one
        best = *s.speedup;
        timed = true;
      }
    }
    since_gain = gain ? 0 : since_gain + 1;
    return true;
  }
};

}  // namespace

std::string ReplayPolicy::text() const {
  switch (kind) {
    case prefix:
      return "prefix:" + std::to_string(per_workload);
    case early_stop:
      return "early-stop:" + std::to_string(patience);
    case realloc:
      return "realloc:" + std::to_string(per_workload) + ",patience=" + std::to_string(patience) +
             ",give_up=" + std::to_string(give_up > 0 ? give_up : 2 * per_workload);
  }
  return "";
}

ReplayPolicy parse_replay_policy(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) bad(spec, "no ':'");
  std::string kind = spec.substr(0, colon);
  std::vector<std::string> parts;
  size_t start = colon + 1;
  while (true) {
    auto comma = spec.find(',', start);
    parts.push_back(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  ReplayPolicy p;
  if (kind == "prefix") {
    p.kind = ReplayPolicy::prefix;
    if (parts.size() != 1) bad(spec, "prefix takes only K");
    p.per_workload = positive_int(spec, "K", parts[0]);
  } else if (kind == "early-stop") {
    p.kind = ReplayPolicy::early_stop;
    if (parts.size() != 1) bad(spec, "early-stop takes only P");
    p.patience = positive_int(spec, "P", parts[0]);
  } else if (kind == "realloc") {
    p.kind = ReplayPolicy::realloc;
    p.per_workload = positive_int(spec, "K", parts[0]);
    for (size_t i = 1; i < parts.size(); ++i) {
      auto eq = parts[i].find('=');
      std::string key = parts[i].substr(0, eq);
      std::string value = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
      if (key == "patience")
        p.patience = positive_int(spec, "patience", value);
      else if (key == "give_up")
        p.give_up = positive_int(spec, "give_up", value);
      else
        bad(spec, "unknown parameter '" + key + "'");
    }
  } else {
    bad(spec, "unknown policy '" + kind + "'");
  }
  return p;
}

ReplayPolicy with_budget(ReplayPolicy policy, int per_workload) {
  if (policy.kind != ReplayPolicy::early_stop) policy.per_workload = per_workload;
  return policy;
}

bool replay_is_exact_for_method(const std::string& method) {
  return method == "iterative" || method == "iterative_context";
}

ReplayOutcome replay(const ReplayPolicy& policy, const SeedTrajectories& recorded) {
  std::vector<Track> tracks(recorded.suite.size());
  for (size_t i = 0; i < recorded.suite.size(); ++i) {
    auto it = recorded.by_workload.find(recorded.suite[i]);
    if (it != recorded.by_workload.end()) tracks[i].recorded = &it->second;
  }

  switch (policy.kind) {
    case ReplayPolicy::prefix:
      for (auto& t : tracks)
        for (int k = 0; k < policy.per_workload && t.buy(); ++k) {
        }
      break;
    case ReplayPolicy::early_stop:
      // Never asks beyond the recording: its end is where this policy stops too.
      for (auto& t : tracks)
        while (t.taken < static_cast<int>(t.available()) &&
               !(t.solved && t.since_gain >= policy.patience))
          t.buy();
      break;
    case ReplayPolicy::realloc: {
      const int give_up = policy.give_up > 0 ? policy.give_up : 2 * policy.per_workload;
      long total = static_cast<long>(policy.per_workload) * static_cast<long>(tracks.size());
      for (long spent = 0; spent < total;) {
        // Retire first, so a pick below is always a live workload.
        for (auto& t : tracks) {
          if (t.solved && t.since_gain >= policy.patience) t.retired = true;
          if (!t.solved && t.taken >= give_up) t.retired = true;
        }
        Track* pick = nullptr;
        for (bool want_unsolved : {true, false}) {
          for (auto& t : tracks)
            if (!t.retired && t.solved != want_unsolved && (!pick || t.taken < pick->taken))
              pick = &t;
          if (pick) break;
        }
        if (!pick) break;
        if (pick->buy()) ++spent;
      }
      break;
    }
  }

  ReplayOutcome out;
  out.seed = recorded.seed;
  std::vector<CandidateResult> results;
  for (size_t i = 0; i < tracks.size(); ++i) {
    const auto& id = recorded.suite[i];
    out.taken[id] = tracks[i].taken;
    if (tracks[i].censored) out.censored.push_back(id);
    for (int k = 0; k < tracks[i].taken; ++k) {
      const auto& s = (*tracks[i].recorded)[static_cast<size_t>(k)];
      results.push_back({id, s.verdict, s.speedup});
    }
  }
  auto suite = summarize_suite(summarize_workloads(recorded.suite, results));
  out.samples = suite.candidates;
  out.correct = suite.correct;
  out.solved = suite.solved;
  out.per_sample_correctness = suite.per_sample_correctness;
  out.geomean_speedup = suite.geomean_speedup;
  return out;
}

PolicyEstimate estimate_policy(const ReplayPolicy& policy,
                               const std::vector<SeedTrajectories>& seeds) {
  if (seeds.empty()) throw std::invalid_argument("estimate_policy: no seeds to replay");
  PolicyEstimate e;
  e.policy = policy;
  std::vector<double> solved, geomean, correctness, samples;
  for (const auto& s : seeds) {
    e.per_seed.push_back(replay(policy, s));
    const auto& o = e.per_seed.back();
    e.exact = e.exact && o.exact();
    solved.push_back(o.solved);
    geomean.push_back(o.geomean_speedup);
    correctness.push_back(o.per_sample_correctness);
    samples.push_back(o.samples);
  }
  e.solved = bootstrap_mean(solved);
  e.geomean_speedup = bootstrap_mean(geomean);
  e.per_sample_correctness = bootstrap_mean(correctness);
  e.samples = bootstrap_mean(samples);
  return e;
}

}  // namespace palladium
