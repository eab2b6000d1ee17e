#include "search/iterative_search.hpp"

#include <stdexcept>
#include <utility>

namespace palladium {

IterativeSearch::IterativeSearch(WorkloadBrief brief, int budget,
                                 bool with_context)
    : brief_(std::move(brief)), budget_(budget) {
  if (budget_ < 0) {
    throw std::invalid_argument("IterativeSearch: negative budget " +
                                std::to_string(budget_) + " for workload " +
                                brief_.id);
  }
  if (with_context && brief_.context.empty()) {
    throw std::invalid_argument(
        "IterativeSearch: with_context set but the brief of workload " +
        brief_.id + " has no context");
  }
  system_prompt_ =
      iterative_system_prompt(with_context ? brief_.context : std::string());
}

std::optional<SampleRequest> IterativeSearch::next() {
  if (outstanding_ || generated_ >= budget_) return std::nullopt;
  SampleRequest req;
  req.sample_index = generated_;
  req.system_prompt = system_prompt_;
  req.user_prompt = iterative_user_prompt(brief_, last_);
  if (last_) req.parent_sample = last_->sample_index;
  outstanding_ = generated_;
  ++generated_;
  return req;
}

void IterativeSearch::record(int sample_index, const std::string& code,
                             const EvalOutcome& outcome) {
  if (!outstanding_ || *outstanding_ != sample_index) {
    throw std::logic_error(
        "IterativeSearch::record: unexpected sample index " +
        std::to_string(sample_index) + " for workload " + brief_.id +
        (outstanding_ ? " (outstanding: " + std::to_string(*outstanding_) + ")"
                      : " (nothing outstanding)"));
  }
  last_ = Feedback{sample_index, code, outcome};
  outstanding_.reset();
}

bool IterativeSearch::done() const {
  return !outstanding_ && generated_ >= budget_;
}

}  // namespace palladium
