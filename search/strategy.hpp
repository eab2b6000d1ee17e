// Strategy: a search method as a deterministic state machine over samples.
//
// The workload_search actor drives any strategy the same way:
//
//   while (!s.done()) {
//     for (SampleRequest& r : s.propose(free_slots))   // ready now, charged
//       send r to the LLM (and, for code/repair, the answer to evaluation);
//     ... later, for each answer: s.observe(r.sample_index, observation);
//   }
//
// Several requests may be outstanding at once where the method allows (a
// beam generation offers its plans together, then each plan's codes as soon
// as that plan is back); the iterative loop offers one at a time.
//
// Determinism. The same brief, config, seed, budget history and set of
// observations give byte-identical requests with identical sample indices,
// whatever order the observations arrive in. That is what lets a resumed run
// replay stored samples through observe() and ask the LLM only for what is
// missing, and what makes a pipelined run repeatable. Strategies get their
// randomness from search/rng.hpp, never from the clock.
//
// Budget. Every proposed request is charged to budget() by propose() itself,
// which throws std::logic_error if a strategy ever proposes more than the
// budget allows (a bug, never a run-time condition): no strategy can exceed
// its budget. The caller may move the limit between calls
// (budget().set_limit / set_open); strategies read it on every propose().
//
// Errors: observe() throws std::logic_error, leaving the state unchanged, for
// an index that is not outstanding or a code/repair observation without an
// outcome. Not thread-safe; one owner (an actor).

#ifndef PALLADIUM_SEARCH_STRATEGY_HPP_
#define PALLADIUM_SEARCH_STRATEGY_HPP_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/taxonomy.hpp"
#include "search/budget.hpp"
#include "search/eval_outcome.hpp"

namespace palladium {

struct SampleRequest {
  int sample_index = 0;  // unique in the search; the resume identity
  SampleRole role = SampleRole::code;
  Phase phase = Phase::iterate;
  // 1-based step of the method: a beam generation (Autocomp's iteration); in
  // the iterative loop, sample_index + 1.
  int generation = 1;
  // The kernel this sample builds on (code, repair, menu, plan) or judges
  // (score); nullopt for the root, the baseline module itself.
  std::optional<int> parent_sample;
  // Code samples of a plan-then-implement method: the plan implemented, and
  // its text (already quoted in user_prompt).
  std::optional<int> plan_sample;
  std::string plan;
  std::string system_prompt;
  std::string user_prompt;
};

// What came back for one request.
struct Observation {
  std::string text;  // the raw LLM response
  // code/repair only: the code extracted from `text` ("" when none) and the
  // evaluation of that code (required).
  std::string code;
  std::optional<EvalOutcome> outcome;
  // The answer hit the output token limit (finish_reason length / MAX_TOKENS): its code may
  // be cut off, and the next prompt says so.
  bool truncated = false;
};

struct BestCandidate {
  int sample_index = 0;
  Phase phase = Phase::iterate;
  double speedup = 1.0;  // baseline_ms / kernel_ms, from the same evaluation
  std::string timing_kind;
};

// What the run and the report learn of one search. Deterministic whenever
// nothing is outstanding.
struct SearchStatus {
  int spent = 0;
  int limit = 0;
  bool open = false;
  bool done = false;
  // Nothing outstanding and nothing proposable under the current budget, but
  // more budget would let the search go on (only with an open budget).
  bool idle = false;
  int wanted = 0;  // units the next step needs; 0 when done
  int candidates = 0;  // code + repair samples observed
  int correct = 0;
  // best_after[k]: the best speedup among the first k+1 observed candidates
  // in sample-index order, clipped below at 1.0 as the suite metric does (XLA
  // is always there to fall back on).
  std::vector<double> best_after;
  std::optional<BestCandidate> best;               // over every phase
  std::map<Phase, BestCandidate> best_by_phase;   // per phase it ran in
  Phase phase = Phase::iterate;                    // the phase it is in
  std::string stop_reason;                         // set once done
};

class Strategy {
 public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  // Up to `max_n` (>= 0) requests that are ready now, in sample-index order,
  // each already charged to budget() and now outstanding. Empty while the
  // method waits on observations, when the budget is spent, or when done.
  std::vector<SampleRequest> propose(int max_n);

  // The answer to outstanding request `sample_index`.
  void observe(int sample_index, const Observation& observation);

  // Nothing outstanding and nothing more will be proposed: the method ended
  // (e.g. early stop) or the budget is closed and cannot pay for a step.
  bool done() const;

  int outstanding() const { return static_cast<int>(outstanding_.size()); }
  const std::map<int, SampleRequest>& outstanding_requests() const { return outstanding_; }

  Budget& budget() { return budget_; }
  const Budget& budget() const { return budget_; }

  SearchStatus status() const;

  // e.g. "iterative", "iterative_context", "autocomp".
  virtual std::string method() const = 0;

 protected:
  explicit Strategy(Budget budget);

  // Ready requests, at most max_n, in sample-index order; their total cost
  // must fit budget(). Sample indices must be deterministic (see above).
  virtual std::vector<SampleRequest> next_requests(int max_n) = 0;
  // Called once per observed request, after validation.
  virtual void on_observation(const SampleRequest& request, const Observation& observation) = 0;
  // True once the method has ended on its own, whatever the budget.
  virtual bool finished() const = 0;
  // Units the next step needs (a beam generation, one iterative sample); the
  // strategy proposes nothing new while an open budget cannot pay for it.
  virtual int wanted() const = 0;
  // True if, with the budget as it is, the strategy can still propose
  // something now or after outstanding requests come back.
  virtual bool can_continue() const = 0;
  virtual Phase current_phase() const = 0;
  virtual std::string stop_reason() const;

 private:
  Budget budget_;
  std::map<int, SampleRequest> outstanding_;
  std::set<int> issued_;
  // Observed candidates by sample index; set when correct with a speedup.
  std::map<int, std::optional<BestCandidate>> candidates_;
  int correct_ = 0;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_STRATEGY_HPP_
