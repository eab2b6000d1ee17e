// The paper's *iterative* method (and iterative + context) as a Strategy.
//
// Generate a candidate, evaluate it, put the last candidate's code, verdict,
// stage, error and (if correct) speedup into the next prompt; repeat until
// the budget is spent. One sample is outstanding at a time: each prompt needs
// the previous outcome. Every sample is a code sample in phase `iterate`;
// sample k's parent is sample k-1.
//
// With a non-zero early-stop window the loop also ends when the best
// correct time has not improved by the rule's factor over the last `window`
// samples (search/early_stop.hpp, one sample = one generation).
//
// Deterministic: the same brief, budget and observations give byte-identical
// requests. Not thread-safe; one owner.
//
// Example:
//   IterativeSearch s(brief, Budget(8));
//   while (!s.done()) {
//     for (auto& req : s.propose(1)) {
//       std::string text = llm.complete(req).text;
//       std::string code = extract_code(text);
//       s.observe(req.sample_index, {text, code, evaluate(code)});
//     }
//   }

#ifndef PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_
#define PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_

#include <optional>
#include <string>
#include <vector>

#include "search/early_stop.hpp"
#include "search/prompt_text.hpp"
#include "search/strategy.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct IterativeConfig {
  // The system prompt carries brief.context (iterative + context).
  bool with_context = false;
  EarlyStopRule early_stop;
};

class IterativeSearch final : public Strategy {
 public:
  // Throws std::invalid_argument if config.with_context is set and the brief
  // has no context, or the early-stop rule is invalid.
  IterativeSearch(WorkloadBrief brief, Budget budget, IterativeConfig config = {});

  std::string method() const override;

 private:
  std::vector<SampleRequest> next_requests(int max_n) override;
  void on_observation(const SampleRequest& request, const Observation& observation) override;
  bool finished() const override { return stopped_; }
  int wanted() const override;
  bool can_continue() const override;
  Phase current_phase() const override { return Phase::iterate; }
  std::string stop_reason() const override;

  WorkloadBrief brief_;
  IterativeConfig config_;
  std::string system_prompt_;  // fixed for the whole search
  int next_index_ = 0;
  std::optional<Feedback> last_;  // feedback for the next prompt
  // losses_[k]: the best relative time (kernel / baseline) held before sample k.
  std::vector<double> losses_;
  bool stopped_ = false;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_
