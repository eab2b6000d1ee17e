// JobLedger: the evaluation dispatcher's bookkeeping, without actors or sockets.
//
// It knows which agents are alive and what they can run, which slots are free, which job is
// leased to whom, under which lease number and until when. The eval_dispatcher actor feeds it
// events and the current time and sends whatever assign() and due_heartbeats() return, so every
// requeue rule is tested here with a fake clock.
//
// Cost: every event is O(1) amortised in the number of agents and jobs (hash lookups, list
// splices, a heap of lease deadlines), never a scan of the fleet:
//   - free slots are indexed per pool of agents with equal Capabilities, and queued jobs per
//     Requirement, so assign() looks at (requirements x pools), both tiny, not at agents;
//   - liveness and heartbeats are two lists ordered by last frame received / sent, so a tick
//     touches only the agents that are due;
//   - lease expiry is a min-heap of deadlines;
//   - a finished job leaves nothing behind (late results are recognised by their lease, not by
//     remembering finished job ids), so memory is bounded by what is queued and in flight.
//
// Guarantees: a submitted job is answered exactly once: by one accepted result from the agent
// holding its current lease, or, after `max_attempts` lost leases (agent gone, lease expired),
// by an Abandoned entry the dispatcher turns into a retryable error (an infrastructure fault is
// never a verdict on the candidate). A result that does not match a live lease held by its
// sender is refused and changes nothing.
//
// Threading: not thread-safe; one owner (the dispatcher actor).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/capabilities.hpp"
#include "protocol/wire_protocol.hpp"

namespace palladium {

class JobLedger {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  struct Options {
    std::chrono::milliseconds heartbeat{500};      // the interval for a small fleet
    int liveness = 4;                              // silent intervals before an agent is dead
    std::chrono::milliseconds lease_grace{30000};  // added to each job's timeout_s
    int max_attempts = 4;                          // lost leases before a job is abandoned
    int max_strikes = 2;                           // expired leases before an agent is dropped
    // Heartbeats per second the coordinator is willing to send (and receive) for the whole
    // fleet: the interval stretches to agents / heartbeat_rate when the fleet outgrows it.
    int heartbeat_rate = 2000;
    // The interval also stretches to 1.5 x the typical evaluation (the time an agent takes per
    // result while it has work), up to this cap: a busy agent then sends its results, and gets
    // its next jobs, more often than the interval, so no heartbeat goes to or comes from it,
    // with any agent that follows the protocol (it keeps the interval it is told). Death is
    // then noticed after `liveness` x 1.5 evaluations: a dead agent costs its slot the same few
    // evaluations whatever they last. A cap <= `heartbeat` turns this off.
    std::chrono::milliseconds eval_heartbeat_max{10000};
    // Jobs an agent may hold beyond its slots, queued on the agent, so it starts the next one
    // the moment one ends instead of waiting a round trip. Used only when no slot is idle.
    int prefetch = 1;
  };

  enum class ResultDisposition {
    accepted,
    stale_lease,  // a lease that ended (requeued, or already answered): a late duplicate
    not_holder,   // the lease is live but held by another agent: refused
    unknown_job,  // no such lease at all
  };

  struct Assignment {
    std::string peer;
    int64_t job_id = 0;
    int64_t lease = 0;
    // The encoded job frame, lease included, in the buffer the ledger keeps for a requeue
    // (wire::JobFrame::share_with_lease): sending it copies no code.
    wire::JobFrame::Shared frame;
  };

  struct Abandoned {
    int64_t job_id = 0;
    int attempts = 0;
    std::string reason;
  };

  struct SweepOutcome {
    std::vector<std::string> dead_agents;    // silent too long; their jobs were requeued
    std::vector<std::string> struck_out;     // let max_strikes leases expire; dropped
    std::vector<int64_t> requeued;           // job ids put back in the queue
    std::vector<Abandoned> abandoned;        // lost too often; answer with an error
  };

  explicit JobLedger(Options options);
  ~JobLedger();
  JobLedger(const JobLedger&) = delete;
  JobLedger& operator=(const JobLedger&) = delete;

  // Queues a job for agents satisfying `need`. The job's frame is encoded here, once. Returns
  // false (and changes nothing) if the job id is already queued or in flight.
  bool submit(const wire::Job& job, const Requirement& need);
  // A second opinion on a job already answered (the dispatcher's result checks,
  // actors/result_check.hpp): it goes to the front of its queue (its requester is already
  // waiting for it) and never to an agent in `avoid` (peers; empty = any agent), requeues
  // included. A job is leased to a different agent only if such an agent satisfies `need`;
  // call has_agent_for(need, avoid) first.
  bool submit_check(const wire::Job& job, const Requirement& need, std::vector<std::string> avoid);
  // Withdraws a queued or leased job without an answer (a check no remaining agent can take);
  // a late result for it is then stale. False if the job is neither.
  bool cancel(int64_t job_id);
  // Drops the agent for good (quarantined): its live leases are requeued at once, as for a BYE;
  // jobs lost too often come back from the next sweep() as abandoned.
  void remove(const std::string& peer, const std::string& why);

  // Registers an agent (or re-registers it: a HELLO from a known peer means it restarted, so
  // the jobs it held are requeued). `slots` must already be validated (>= 1).
  void on_hello(const std::string& peer, const std::string& name, const Capabilities& caps,
                int slots, TimePoint now);
  // Any frame from the peer proves it is alive. Unknown peers are ignored.
  void on_seen(const std::string& peer, TimePoint now);
  // The agent left: its leases are requeued at once.
  void on_bye(const std::string& peer);
  // On `accepted`, *dispatches is the number of leases the job took; the time the agent took
  // for it feeds the evaluation-time stretch of the heartbeat interval (Options).
  ResultDisposition on_result(const std::string& peer, const wire::Result& result,
                              int* dispatches, TimePoint now);

  // Declares silent agents dead, expires overdue leases, requeues their jobs.
  SweepOutcome sweep(TimePoint now);

  // Leases queued jobs to free matching slots; the caller sends the frames.
  std::vector<Assignment> assign(TimePoint now);

  // Agents to which nothing was sent for one heartbeat interval; they count as sent to now.
  std::vector<std::string> due_heartbeats(TimePoint now);

  // The current heartbeat interval (Options::heartbeat_rate, eval_heartbeat_max). It only grows
  // during a run.
  std::chrono::milliseconds heartbeat_interval() const { return interval_; }
  // True once after the interval grew to twice what agents were last told (the dispatcher
  // then tells every agent); false otherwise.
  bool take_interval_broadcast();
  // The typical time an agent takes per result while it has work (a moving average over the
  // accepted results; the wait of a prefetched job behind the one ahead does not count); 0
  // before the first result.
  std::chrono::microseconds typical_eval() const {
    return std::chrono::microseconds(static_cast<int64_t>(eval_estimate_ms_ * 1000));
  }

  bool known(const std::string& peer) const { return find_agent(peer) != nullptr; }
  // What the peer's HELLO declared (and admission accepted); nullptr for an unknown peer.
  const Capabilities* capabilities(const std::string& peer) const;
  bool has_agent_for(const Requirement& need) const;
  // Whether an agent not in `avoid` satisfies `need`.
  bool has_agent_for(const Requirement& need, const std::vector<std::string>& avoid) const;
  std::vector<std::string> agent_ids() const;
  size_t agent_count() const { return agents_.size(); }
  size_t queued() const { return queued_; }
  size_t in_flight() const { return leases_.size(); }
  size_t total_slots() const { return total_slots_; }

 private:
  struct Agent;
  struct Pool;
  struct NeedQueue;
  // A queued or in-flight job. Held in jobs_'s node itself, not behind a pointer: read again
  // only when its result comes, so each separate block is another cache miss per candidate.
  struct Entry {
    Entry(const wire::Job& job, int need_index, std::string storage)
        : job_id(job.job_id),
          timeout_s(job.timeout_s),
          need(need_index),
          frame(job, std::move(storage)) {}
    int64_t job_id;
    double timeout_s;
    int need;
    wire::JobFrame frame;
    int attempts = 0;    // leases handed out so far
    int64_t lease = 0;   // the live lease, 0 while queued
    // The agent holding `lease`: an agent's live leases end before it is dropped (drop_agent).
    Agent* holder = nullptr;
    TimePoint sent;      // when `lease` was handed out
    std::vector<std::string> avoid;  // peers that must not get it (submit_check)
  };

  Agent* find_agent(const std::string& peer) const;
  void release(int64_t job_id, const std::string& why, SweepOutcome* out);
  void end_lease(Entry& entry);
  // Keeps a finished frame's buffer for the next submit() (wire::JobFrame::take_storage).
  void recycle(std::string storage);
  void drop_agent(const std::string& peer, const std::string& why, SweepOutcome* out);
  void free_slot(Agent& agent);
  void offer(Agent& agent);  // puts the agent in its pool's free or spare list if it has room
  int queue_for(const Requirement& need);  // the index in needs_, created if new
  int pool_for(const Capabilities& caps);
  void recompute_interval();
  bool enqueue(const wire::Job& job, const Requirement& need, std::vector<std::string> avoid);
  // The position in `jobs` of the first job (of the first `limit`) `peer` may take.
  std::deque<int64_t>::iterator first_allowed(std::deque<int64_t>& jobs, const std::string& peer);

  Options options_;
  std::unordered_map<std::string, std::unique_ptr<Agent>> agents_;
  std::vector<Agent*> slots_;         // by Agent::slot; null where the agent left
  std::vector<uint32_t> free_slots_;  // indexes of null entries of slots_, for reuse
  // The last agent find_agent() found (null after it left).
  mutable std::string cached_peer_;
  mutable Agent* cached_agent_ = nullptr;
  std::vector<std::unique_ptr<Pool>> pools_;
  std::unordered_map<std::string, int> pool_index_;     // Capabilities::key -> pools_ index
  std::vector<std::unique_ptr<NeedQueue>> needs_;
  std::unordered_map<int64_t, Entry> jobs_;  // queued or in flight
  std::unordered_map<int64_t, int64_t> leases_;         // live lease -> job id
  // Lease deadlines; entries of ended leases are skipped when they surface.
  std::priority_queue<std::pair<TimePoint, int64_t>, std::vector<std::pair<TimePoint, int64_t>>,
                      std::greater<>>
      deadlines_;
  std::list<std::string> by_seen_;  // agents, least recently heard from first
  std::list<std::string> by_sent_;  // agents, least recently sent to first
  std::vector<Abandoned> pending_abandoned_;  // from drops outside sweep()
  // Buffers of answered jobs' frames, reused by the next jobs': a frame is the size of its
  // candidate's code (KBs), and allocating and freeing one per dispatch showed in perf.
  std::vector<std::string> spare_frames_;
  int64_t next_lease_ = 1;
  uint64_t next_incarnation_ = 1;
  size_t queued_ = 0;
  size_t total_slots_ = 0;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds told_interval_;
  bool dirty_ = true;  // something assign() could act on changed
  // Moving average of an agent's time per result while it had work (0: none measured yet).
  double eval_estimate_ms_ = 0;
};

}  // namespace palladium
