// The agent's judge slots as bookkeeping only: which slot runs which job, the local queue,
// duplicate detection, judge-death retries, job and ready deadlines, and the restart backoff.
//
// Pure: no processes, sockets, threads or clock reads. Every call that depends on time takes
// `now`, so a test drives it with a fake clock (tests/agent/slot_pool_test.cpp). The agent's
// poll loop (agent/agent.cpp) owns the judges and does what the pool decides: it reports what a
// judge did (started, ready, a result, lost) and asks which slots take a job and which timers
// are due.
//
// A slot's life: kDown -> started() -> kStarting -> ready() -> kIdle -> assign() -> kBusy ->
// complete() -> kIdle. A judge that dies takes its slot back through restart_now()/started()
// or back_off() -> kDown until its restart time.
//
// Thread safety: none; the agent's one thread owns it.

#ifndef PALLADIUM_AGENT_SLOT_POOL_HPP_
#define PALLADIUM_AGENT_SLOT_POOL_HPP_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/wire_protocol.hpp"

namespace palladium::agent {

class SlotPool {
 public:
  using Clock = std::chrono::steady_clock;

  enum class State { kStarting, kIdle, kBusy, kDown };

  // What submit() did with a job.
  enum class Admission {
    kAccepted,          // queued, and an idle slot will take it at the next assign()
    kQueued,            // queued until a slot is free (the coordinator's one prefetched job)
    kOverAssigned,      // queued, but more jobs are in flight than slots + 1
    kDuplicateRunning,  // a slot already runs this job id: dropped
    kDuplicateQueued,   // this job id is already queued: dropped
  };

  // A job that left its slot, and when the slot started it.
  struct Finished {
    wire::Job job;
    Clock::time_point started;
  };

  // judge_lost()'s decision.
  struct Lost {
    int deaths = 0;                   // judges lost under this job so far
    std::optional<Finished> charged;  // set when the job is charged (its retries are spent);
                                      // unset: it went back to the front of the queue
  };

  enum class Timer {
    kJobTimeout,    // a busy slot's job outlived its timeout_s
    kReadyTimeout,  // a starting judge sent no ready in time
    kRestart,       // a down slot's backoff is over
  };

  // Jobs run at most kJudgeRetries + 1 judges before one that keeps killing them is charged.
  static constexpr int kJudgeRetries = 2;
  // A job without a positive timeout_s gets this many seconds.
  static constexpr double kDefaultTimeoutS = 600.0;

  SlotPool(int slots, std::chrono::milliseconds ready_timeout);

  int size() const { return static_cast<int>(slots_.size()); }
  State state(int slot) const { return slots_.at(slot).state; }
  // The job `slot` runs (kBusy), else nullptr.
  const wire::Job* job(int slot) const;
  // When the slot's judge was started (kStarting) or its job assigned (kBusy).
  Clock::time_point started_at(int slot) const { return slots_.at(slot).started; }
  // The ready deadline (kStarting) or the job's deadline (kBusy).
  Clock::time_point deadline(int slot) const { return slots_.at(slot).deadline; }
  std::size_t queued() const { return queue_.size(); }
  bool all_idle() const;

  // -- what the judges did --------------------------------------------------------------------

  // A judge was spawned for `slot`: it has ready_timeout to say ready.
  void started(int slot, Clock::time_point now);
  // The judge said ready. True when that made a starting slot idle (and cleared its failures).
  bool ready(int slot);
  // A result for `job_id` arrived on `slot`, or its deadline passed (kJobTimeout): the slot is
  // idle again and the job's judge-death count forgotten. Unset when the slot was not running
  // `job_id` (a stale result, dropped).
  std::optional<Finished> complete(int slot, int64_t job_id);
  // The judge of busy `slot` died or broke the protocol under its job: not the candidate's doing
  // (it runs in its own sandboxed process), so the job goes back to the front of the queue for a
  // fresh judge, kJudgeRetries times; the next death charges it. The slot's restart failures
  // are cleared (the judge had been fine).
  Lost judge_lost(int slot);
  // A judge that did not start or died before its ready counts towards the slot's backoff.
  void start_failed(int slot) { ++slots_.at(slot).restart_failures; }

  // -- restarts -------------------------------------------------------------------------------

  // After `slot`'s judge was killed: true when a fresh one should start at once (no failure
  // since its last ready); the agent then spawns it and calls started(). Otherwise, or when the
  // spawn fails, back_off().
  bool restart_now(int slot) const { return slots_.at(slot).restart_failures == 0; }
  // Marks `slot` down until now + a delay that doubles with each failure (1 s .. 30 s), so a
  // broken environment does not spin. Returns the delay.
  std::chrono::milliseconds back_off(int slot, Clock::time_point now);

  // -- jobs -----------------------------------------------------------------------------------

  // Queues `job` unless a slot runs it or it is queued already.
  Admission submit(wire::Job job);
  // Idle slots take queued jobs, in slot order and queue order; each becomes kBusy with a
  // deadline of now + its timeout. Returns the slots that took one (the agent sends each job()).
  std::vector<int> assign(Clock::time_point now);

  // -- time -----------------------------------------------------------------------------------

  // The timers that are due at `now`, in slot order (at most one per slot).
  std::vector<std::pair<int, Timer>> due(Clock::time_point now) const;
  // The earliest deadline or restart time, or `later` if that is earlier.
  Clock::time_point next_wakeup(Clock::time_point later) const;

 private:
  struct Slot {
    State state = State::kDown;
    std::optional<wire::Job> job;
    Clock::time_point started;   // job start, or judge spawn while kStarting
    Clock::time_point deadline;  // job timeout, or ready timeout while kStarting
    Clock::time_point restart_at;
    int restart_failures = 0;
  };

  std::chrono::milliseconds ready_timeout_;
  std::vector<Slot> slots_;
  std::deque<wire::Job> queue_;
  std::map<int64_t, int> judge_deaths_;  // job id -> judges lost while running it
};

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_SLOT_POOL_HPP_
