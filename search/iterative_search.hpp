// The paper's *iterative* method (and iterative + context) as a
// deterministic state machine.
//
// Generate a candidate, evaluate it, put the last candidate's code, verdict,
// stage, error and (if correct) speedup into the next prompt; repeat until
// the per-workload sample budget is spent. The workload_search actor drives
// it: next() for a request, the LLM and evaluator do the work, record() with
// the outcome. There is at most one sample outstanding at a time.
//
// Deterministic: the same brief, budget and sequence of record() calls give
// byte-identical requests, so a resumed run can replay stored candidates
// through record() and ask next() only for what is still missing.
//
// Not thread-safe; one owner (an actor).
//
// Example:
//   IterativeSearch s(brief, /*budget=*/8);
//   while (auto req = s.next()) {
//     std::string code = extract_code(llm.complete(...).text);
//     s.record(req->sample_index, code, evaluate(code));
//   }
//   assert(s.done());

#ifndef PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_
#define PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_

#include <optional>
#include <string>

#include "search/eval_outcome.hpp"
#include "search/prompt_text.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct SampleRequest {
  int sample_index = 0;  // 0, 1, ... in issue order
  std::string system_prompt;
  std::string user_prompt;
  // The sample whose feedback this prompt carries; nullopt for the first.
  std::optional<int> parent_sample;
};

class IterativeSearch {
 public:
  // `budget` is the number of samples for this workload (>= 0). With
  // `with_context` the system prompt carries brief.context, which must then
  // be non-empty. Throws std::invalid_argument on a negative budget or a
  // missing context.
  IterativeSearch(WorkloadBrief brief, int budget, bool with_context = false);

  // The next request, or nullopt while a sample is outstanding (record() not
  // yet called for it) or when the budget is spent. Each non-null result
  // makes that sample outstanding and counts against the budget.
  std::optional<SampleRequest> next();

  // Reports the outcome of the outstanding sample. `code` is the code
  // extracted from the response ("" when there was none). Throws
  // std::logic_error naming `sample_index` if it is not the outstanding
  // sample (including when nothing is outstanding); state is then unchanged.
  void record(int sample_index, const std::string& code,
              const EvalOutcome& outcome);

  // True when the budget is spent and nothing is outstanding.
  bool done() const;

  // Requests handed out by next() so far (recorded or outstanding).
  int generated() const { return generated_; }
  int budget() const { return budget_; }

 private:
  WorkloadBrief brief_;
  int budget_;
  std::string system_prompt_;  // fixed for the whole search
  int generated_ = 0;
  std::optional<int> outstanding_;
  std::optional<Feedback> last_;  // feedback for the next prompt
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_ITERATIVE_SEARCH_HPP_
