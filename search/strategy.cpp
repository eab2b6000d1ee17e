#include "search/strategy.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace palladium {

Strategy::Strategy(Budget budget) : budget_(std::move(budget)) {}

Strategy::~Strategy() = default;

std::string Strategy::stop_reason() const {
  if (!done()) return "";
  return finished() ? "finished" : "budget spent";
}

std::vector<SampleRequest> Strategy::propose(int max_n) {
  if (max_n < 0) {
    throw std::invalid_argument("Strategy::propose: negative max_n " + std::to_string(max_n));
  }
  if (max_n == 0 || done()) return {};
  std::vector<SampleRequest> requests = next_requests(max_n);
  // Check everything before charging anything: a faulty strategy must not
  // leave a half-charged budget behind.
  if (static_cast<int>(requests.size()) > max_n) {
    throw std::logic_error(method() + ": proposed " + std::to_string(requests.size()) +
                           " requests, more than the " + std::to_string(max_n) + " asked for");
  }
  Budget trial = budget_;
  int previous = -1;
  for (const auto& r : requests) {
    // Indices need not grow from one call to the next (a strategy may assign
    // them structurally), but each is issued once.
    if (r.sample_index < 0 || r.sample_index <= previous || issued_.count(r.sample_index)) {
      throw std::logic_error(method() + ": sample index " + std::to_string(r.sample_index) +
                             " is negative, out of order or already issued");
    }
    previous = r.sample_index;
    if (!trial.try_charge(r.role)) {
      throw std::logic_error(method() + ": sample " + std::to_string(r.sample_index) + " (" +
                             std::string(to_string(r.role)) + ") exceeds the budget of " +
                             std::to_string(budget_.limit()));
    }
  }
  budget_ = trial;
  for (const auto& r : requests) {
    issued_.insert(r.sample_index);
    outstanding_.emplace(r.sample_index, r);
  }
  return requests;
}

void Strategy::observe(int sample_index, const Observation& observation) {
  auto it = outstanding_.find(sample_index);
  if (it == outstanding_.end()) {
    throw std::logic_error(method() + ": observe: sample " + std::to_string(sample_index) +
                           " is not outstanding");
  }
  const SampleRequest& req = it->second;
  if (is_candidate_role(req.role) && !observation.outcome) {
    throw std::logic_error(method() + ": observe: " + std::string(to_string(req.role)) +
                           " sample " + std::to_string(sample_index) + " has no evaluation");
  }
  on_observation(req, observation);
  if (is_candidate_role(req.role)) {
    std::optional<BestCandidate> best;
    if (auto s = observation.outcome->speedup()) {
      best = BestCandidate{sample_index, req.phase, *s, observation.outcome->timing_kind};
    }
    candidates_[sample_index] = best;
    if (observation.outcome->verdict == Verdict::correct) correct_++;
  }
  outstanding_.erase(it);
}

bool Strategy::done() const {
  return outstanding_.empty() && (finished() || (!budget_.is_open() && !can_continue()));
}

SearchStatus Strategy::status() const {
  SearchStatus s;
  s.spent = budget_.spent();
  s.limit = budget_.limit();
  s.open = budget_.is_open();
  s.done = done();
  s.idle = !s.done && outstanding_.empty() && !can_continue();
  s.wanted = s.done ? 0 : wanted();
  s.candidates = static_cast<int>(candidates_.size());
  s.correct = correct_;
  double best = 1.0;
  for (const auto& [index, c] : candidates_) {
    if (c) {
      if (c->speedup > best) best = c->speedup;
      if (!s.best || c->speedup > s.best->speedup) s.best = c;
      auto pit = s.best_by_phase.find(c->phase);
      if (pit == s.best_by_phase.end() || c->speedup > pit->second.speedup) {
        s.best_by_phase[c->phase] = *c;
      }
    }
    s.best_after.push_back(best);
  }
  s.phase = current_phase();
  s.stop_reason = stop_reason();
  return s;
}

}  // namespace palladium
