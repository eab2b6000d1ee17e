// JobLedger: the evaluation dispatcher's bookkeeping, without actors or sockets.
//
// It knows which agents are alive, how many slots each has free, which job is
// leased to whom and until when. The eval_dispatcher actor feeds it events and
// the current time and sends whatever assign() returns, so every requeue rule
// is tested here with a fake clock.
//
// Guarantees: a submitted job is eventually either answered by exactly one
// accepted result or, after `max_attempts` lost leases, abandoned with a
// synthesized `crash` result; it is never silently dropped. A result for a job
// that already has one (duplicate, or late after a requeue) is refused.
//
// Threading: not thread-safe; one owner (the dispatcher actor).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/wire_protocol.hpp"

namespace palladium {

class JobLedger {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  struct Options {
    std::chrono::milliseconds heartbeat{500};
    int liveness = 4;                          // silent intervals before an agent is dead
    std::chrono::milliseconds lease_grace{30000};  // added to each job's timeout_s
    int max_attempts = 4;                      // leases lost before a job is abandoned
  };

  enum class ResultDisposition { accepted, duplicate, unknown_job };

  struct SweepOutcome {
    std::vector<std::string> dead_agents;
    std::vector<int64_t> requeued;             // job ids put back in the queue
    std::vector<wire::Result> abandoned;       // synthesized results for lost-too-often jobs
  };

  explicit JobLedger(Options options);

  // Queues a job. A job id already known (queued, leased or finished) is ignored.
  void submit(wire::Job job);

  // An agent said hello. A re-hello from a known agent means it restarted, so
  // the jobs it held are requeued.
  void on_hello(const std::string& peer, const wire::Hello& hello, TimePoint now);
  // Any frame from the peer proves it is alive. Unknown peers are ignored.
  void on_seen(const std::string& peer, TimePoint now);
  void on_bye(const std::string& peer);
  ResultDisposition on_result(const std::string& peer, const wire::Result& result);

  // Declares silent agents dead and requeues their jobs and expired leases.
  SweepOutcome sweep(TimePoint now);

  // Leases queued jobs to agents with free slots; the caller sends them.
  std::vector<std::pair<std::string, wire::Job>> assign(TimePoint now);

  std::vector<std::string> agent_ids() const;
  size_t agent_count() const { return agents_.size(); }
  size_t queued() const { return queue_.size(); }
  size_t in_flight() const { return leases_.size(); }
  bool finished(int64_t job_id) const { return finished_.count(job_id) != 0; }

 private:
  struct Agent {
    int slots = 1;
    TimePoint last_seen;
    std::set<int64_t> jobs;
  };
  struct Lease {
    std::string peer;
    TimePoint deadline;
  };
  struct Entry {
    wire::Job job;
    int attempts = 0;  // leases handed out so far
  };

  // Puts a leased job back at the front of the queue, or abandons it.
  void release(int64_t job_id, const std::string& why, SweepOutcome* out);
  void drop_agent(const std::string& peer, const std::string& why, SweepOutcome* out);

  Options options_;
  std::map<std::string, Agent> agents_;
  std::map<int64_t, Entry> jobs_;     // every job not yet finished
  std::deque<int64_t> queue_;
  std::map<int64_t, Lease> leases_;
  std::set<int64_t> finished_;
  std::vector<wire::Result> pending_abandoned_;  // from drop_agent outside sweep()
};

}  // namespace palladium
