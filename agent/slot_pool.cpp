#include "agent/slot_pool.hpp"

#include <algorithm>

namespace palladium::agent {

SlotPool::SlotPool(int slots, std::chrono::milliseconds ready_timeout)
    : ready_timeout_(ready_timeout), slots_(static_cast<std::size_t>(std::max(0, slots))) {}

const wire::Job* SlotPool::job(int slot) const {
  const Slot& s = slots_.at(slot);
  return s.job ? &*s.job : nullptr;
}

bool SlotPool::all_idle() const {
  return std::all_of(slots_.begin(), slots_.end(),
                     [](const Slot& s) { return s.state == State::kIdle; });
}

void SlotPool::started(int slot, Clock::time_point now) {
  Slot& s = slots_.at(slot);
  s.job.reset();
  s.state = State::kStarting;
  s.started = now;
  s.deadline = now + ready_timeout_;
}

bool SlotPool::ready(int slot) {
  Slot& s = slots_.at(slot);
  if (s.state != State::kStarting) return false;
  s.state = State::kIdle;
  s.restart_failures = 0;
  return true;
}

std::optional<SlotPool::Finished> SlotPool::complete(int slot, int64_t job_id) {
  Slot& s = slots_.at(slot);
  if (s.state != State::kBusy || !s.job || s.job->job_id != job_id) return std::nullopt;
  judge_deaths_.erase(job_id);
  Finished done{std::move(*s.job), s.started};
  s.job.reset();
  s.state = State::kIdle;
  return done;
}

SlotPool::Lost SlotPool::judge_lost(int slot) {
  Slot& s = slots_.at(slot);
  Lost lost;
  if (s.state != State::kBusy || !s.job) return lost;
  s.restart_failures = 0;
  lost.deaths = ++judge_deaths_[s.job->job_id];
  if (lost.deaths <= kJudgeRetries) {
    queue_.push_front(std::move(*s.job));
    s.job.reset();
    s.state = State::kIdle;
    return lost;
  }
  lost.charged = complete(slot, s.job->job_id);
  return lost;
}

std::chrono::milliseconds SlotPool::back_off(int slot, Clock::time_point now) {
  Slot& s = slots_.at(slot);
  std::chrono::milliseconds delay(std::min<long>(30000, 1000L << std::min(s.restart_failures, 5)));
  ++s.restart_failures;
  s.job.reset();
  s.state = State::kDown;
  s.restart_at = now + delay;
  return delay;
}

SlotPool::Admission SlotPool::submit(wire::Job job) {
  auto same = [&](const wire::Job& j) { return j.job_id == job.job_id; };
  for (const Slot& s : slots_) {
    if (s.job && same(*s.job)) return Admission::kDuplicateRunning;
  }
  if (std::any_of(queue_.begin(), queue_.end(), same)) return Admission::kDuplicateQueued;
  std::size_t idle = 0, busy = 0;
  for (const Slot& s : slots_) {
    idle += s.state == State::kIdle ? 1 : 0;
    busy += s.job ? 1 : 0;
  }
  Admission admission = Admission::kAccepted;
  if (idle <= queue_.size()) {
    // The coordinator prefetches one job beyond the slots (actors/job_ledger.hpp) so a slot
    // never waits a round trip; more than that is over-assignment.
    std::size_t in_flight = queue_.size() + 1 + busy;
    admission = in_flight > slots_.size() + 1 ? Admission::kOverAssigned : Admission::kQueued;
  }
  queue_.push_back(std::move(job));
  return admission;
}

std::vector<int> SlotPool::assign(Clock::time_point now) {
  std::vector<int> taken;
  for (int i = 0; i < size() && !queue_.empty(); ++i) {
    Slot& s = slots_[static_cast<std::size_t>(i)];
    if (s.state != State::kIdle) continue;
    s.job = std::move(queue_.front());
    queue_.pop_front();
    double timeout_s = s.job->timeout_s > 0 ? s.job->timeout_s : kDefaultTimeoutS;
    s.state = State::kBusy;
    s.started = now;
    s.deadline = now + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(timeout_s));
    taken.push_back(i);
  }
  return taken;
}

std::vector<std::pair<int, SlotPool::Timer>> SlotPool::due(Clock::time_point now) const {
  std::vector<std::pair<int, Timer>> out;
  for (int i = 0; i < size(); ++i) {
    const Slot& s = slots_[static_cast<std::size_t>(i)];
    if (s.state == State::kBusy && now >= s.deadline) {
      out.emplace_back(i, Timer::kJobTimeout);
    } else if (s.state == State::kStarting && now >= s.deadline) {
      out.emplace_back(i, Timer::kReadyTimeout);
    } else if (s.state == State::kDown && now >= s.restart_at) {
      out.emplace_back(i, Timer::kRestart);
    }
  }
  return out;
}

SlotPool::Clock::time_point SlotPool::next_wakeup(Clock::time_point later) const {
  Clock::time_point t = later;
  for (const Slot& s : slots_) {
    if (s.state == State::kBusy || s.state == State::kStarting) t = std::min(t, s.deadline);
    if (s.state == State::kDown) t = std::min(t, s.restart_at);
  }
  return t;
}

}  // namespace palladium::agent
