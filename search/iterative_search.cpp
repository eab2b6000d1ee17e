#include "search/iterative_search.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "search/candidate_loss.hpp"

namespace palladium {

IterativeSearch::IterativeSearch(WorkloadBrief brief, Budget budget, IterativeConfig config)
    : Strategy(std::move(budget)), brief_(std::move(brief)), config_(config) {
  if (config_.with_context && brief_.context.empty()) {
    throw std::invalid_argument(
        "IterativeSearch: with_context set but the brief of workload " + brief_.id +
        " has no context");
  }
  if (config_.early_stop.window < 0) {
    throw std::invalid_argument("IterativeSearch: negative early-stop window");
  }
  system_prompt_ =
      iterative_system_prompt(config_.with_context ? brief_.context : std::string());
  losses_.push_back(std::numeric_limits<double>::infinity());
}

std::string IterativeSearch::method() const {
  return config_.with_context ? "iterative_context" : "iterative";
}

int IterativeSearch::wanted() const { return budget().cost(SampleRole::code); }

bool IterativeSearch::can_continue() const {
  return !stopped_ && budget().can_afford(SampleRole::code);
}

std::string IterativeSearch::stop_reason() const {
  if (!done()) return "";
  return stopped_ ? "early stop" : "budget spent";
}

std::vector<SampleRequest> IterativeSearch::next_requests(int max_n) {
  if (max_n < 1 || outstanding() > 0 || !can_continue()) return {};
  SampleRequest req;
  req.sample_index = next_index_;
  req.role = SampleRole::code;
  req.phase = Phase::iterate;
  req.generation = next_index_ + 1;
  req.system_prompt = system_prompt_;
  req.user_prompt = iterative_user_prompt(brief_, last_);
  if (last_) req.parent_sample = last_->sample_index;
  ++next_index_;
  return {std::move(req)};
}

void IterativeSearch::on_observation(const SampleRequest& request,
                                     const Observation& observation) {
  last_ = Feedback{request.sample_index, observation.code, *observation.outcome,
                   observation.truncated};
  losses_.push_back(std::min(losses_.back(), candidate_loss(*observation.outcome)));
  // The rule is checked before the next sample, generation = that sample's.
  const int next_generation = request.sample_index + 2;
  if (should_early_stop(losses_, next_generation, config_.early_stop, 0)) stopped_ = true;
}

}  // namespace palladium
