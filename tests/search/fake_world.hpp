// A fake LLM and evaluator for strategy tests: answers every role with text
// a test can recognise, and evaluates code by a script the test supplies.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "search/rng.hpp"
#include "search/strategy.hpp"

namespace palladium::testing {

inline EvalOutcome correct(double speedup) {
  EvalOutcome o;
  o.verdict = Verdict::correct;
  o.stage = "done";
  o.baseline_ms = 1.0;
  o.kernel_ms = 1.0 / speedup;
  o.timing_kind = "cpu-wall";
  return o;
}

inline EvalOutcome wrong(Verdict v = Verdict::numerics_mismatch,
                         std::string error = "max_abs_err 3.0 > atol") {
  EvalOutcome o;
  o.verdict = v;
  o.stage = "numerics";
  o.error = std::move(error);
  return o;
}

struct FakeWorld {
  // Outcome of a code or repair sample; default: every candidate is wrong.
  std::function<EvalOutcome(const SampleRequest&)> evaluate = [](const SampleRequest&) {
    return wrong();
  };
  // Text of a score answer; default "SCORE: 5".
  std::function<std::string(const SampleRequest&)> score = [](const SampleRequest&) {
    return std::string("SCORE: 5");
  };
  std::string menu = "<strategies>\n- NEW_STRATEGY_A\n- NEW_STRATEGY_B\n</strategies>\n";

  Observation answer(const SampleRequest& r) const {
    Observation o;
    switch (r.role) {
      case SampleRole::plan:
        o.text = "PLAN_" + std::to_string(r.sample_index);
        break;
      case SampleRole::menu:
        o.text = menu;
        break;
      case SampleRole::score:
        o.text = score(r);
        break;
      case SampleRole::code:
      case SampleRole::repair:
        o.code = "def workload(x):  # CODE_" + std::to_string(r.sample_index) + "\n";
        o.text = "```python\n" + o.code + "```\n";
        o.outcome = evaluate(r);
        break;
    }
    return o;
  }
};

struct RunLog {
  std::vector<SampleRequest> issued;         // in issue order
  std::map<int, SampleRequest> by_index;
  std::vector<int> batch_sizes;              // sizes of non-empty propose() results
  int max_outstanding = 0;
};

// Drives `s` to the end. Up to `in_flight` requests are outstanding at once;
// with shuffle_seed != 0 the outstanding answers come back in a random order.
inline RunLog run(Strategy& s, const FakeWorld& w, int in_flight = 1 << 20,
                  uint64_t shuffle_seed = 0, int max_steps = 100000) {
  RunLog log;
  std::vector<SampleRequest> pending;
  SplitMix64 rng(shuffle_seed);
  for (int step = 0; step < max_steps; ++step) {
    auto batch = s.propose(in_flight - static_cast<int>(pending.size()));
    if (!batch.empty()) log.batch_sizes.push_back(static_cast<int>(batch.size()));
    for (auto& r : batch) {
      log.issued.push_back(r);
      log.by_index[r.sample_index] = r;
      pending.push_back(r);
    }
    log.max_outstanding = std::max(log.max_outstanding, s.outstanding());
    if (pending.empty()) break;
    size_t pick = shuffle_seed ? rng.next() % pending.size() : 0;
    SampleRequest r = pending[pick];
    pending.erase(pending.begin() + static_cast<long>(pick));
    s.observe(r.sample_index, w.answer(r));
  }
  return log;
}

inline int count_role(const RunLog& log, SampleRole role) {
  return static_cast<int>(std::count_if(log.issued.begin(), log.issued.end(),
                                        [&](const SampleRequest& r) { return r.role == role; }));
}

}  // namespace palladium::testing
