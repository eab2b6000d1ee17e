#include "actors/job_ledger.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace palladium {

struct JobLedger::Agent {
  std::string peer;
  std::string name;  // the HELLO's agent_id: for logs only, never for identity
  Capabilities caps;
  int pool = 0;
  int slots = 1;
  int busy = 0;  // live leases plus expired leases whose late result has not come
  uint64_t incarnation = 0;
  uint32_t slot = 0;  // its index in slots_
  bool in_free_list = false;   // has an entry in its pool's `free`
  bool in_spare_list = false;  // has an entry in its pool's `spare`
  int strikes = 0;
  TimePoint last_seen;
  TimePoint last_sent;
  TimePoint last_result;  // its latest accepted result, or its HELLO
  std::vector<int64_t> jobs;                          // live leases' job ids
  std::vector<int64_t> late;                          // expired leases still occupying a slot
  std::list<std::string>::iterator seen_it, sent_it;  // positions in by_seen_ / by_sent_
};

struct JobLedger::Pool {
  Capabilities caps;
  int agents = 0;
  // Agents with at least one idle slot, as (index in slots_, incarnation); and agents whose
  // slots are all busy but whose prefetch queue has room. An entry whose agent is gone,
  // re-registered or full is stale and skipped. Idle slots are always used first. Indexes, not
  // peers: an entry is made and used once per dispatch, and a peer is a 40-byte key to copy
  // and hash each time.
  std::deque<std::pair<uint32_t, uint64_t>> free;
  std::deque<std::pair<uint32_t, uint64_t>> spare;
};

struct JobLedger::NeedQueue {
  Requirement need;
  std::deque<int64_t> jobs;
  std::vector<int> pools;  // indexes of pools satisfying `need`
  size_t pools_checked = 0;  // pools_[0, pools_checked) were matched against `need`
};

JobLedger::JobLedger(Options options)
    : options_(options), interval_(options.heartbeat), told_interval_(options.heartbeat) {}

JobLedger::~JobLedger() = default;

int JobLedger::queue_for(const Requirement& need) {
  // A dispatcher has one requirement per check level it uses (a cascade's two tiers at most):
  // a scan compares a field or two, where a key built per job cost several allocations.
  for (size_t i = 0; i < needs_.size(); ++i) {
    if (needs_[i]->need == need) return static_cast<int>(i);
  }
  needs_.push_back(std::make_unique<NeedQueue>());
  needs_.back()->need = need;
  return static_cast<int>(needs_.size()) - 1;
}

JobLedger::Agent* JobLedger::find_agent(const std::string& peer) const {
  // The dispatcher asks about the same peer several times per frame (on_seen, on_result,
  // capabilities): one hash of its key, not one per call.
  if (cached_agent_ != nullptr && cached_peer_ == peer) return cached_agent_;
  auto it = agents_.find(peer);
  if (it == agents_.end()) return nullptr;
  cached_peer_ = peer;
  cached_agent_ = it->second.get();
  return cached_agent_;
}

const Capabilities* JobLedger::capabilities(const std::string& peer) const {
  Agent* a = find_agent(peer);
  return a == nullptr ? nullptr : &a->caps;
}

int JobLedger::pool_for(const Capabilities& caps) {
  auto key = caps.key();
  auto it = pool_index_.find(key);
  if (it != pool_index_.end()) return it->second;
  int index = static_cast<int>(pools_.size());
  pool_index_.emplace(key, index);
  pools_.push_back(std::make_unique<Pool>());
  pools_.back()->caps = caps;
  return index;
}

bool JobLedger::submit(const wire::Job& job, const Requirement& need) {
  return enqueue(job, need, {});
}

bool JobLedger::submit_check(const wire::Job& job, const Requirement& need,
                             std::vector<std::string> avoid) {
  return enqueue(job, need, std::move(avoid));
}

bool JobLedger::enqueue(const wire::Job& job, const Requirement& need,
                        std::vector<std::string> avoid) {
  if (jobs_.count(job.job_id)) return false;
  int index = queue_for(need);
  std::string storage;
  if (!spare_frames_.empty()) {
    storage = std::move(spare_frames_.back());
    spare_frames_.pop_back();
  }
  auto [it, fresh] = jobs_.try_emplace(job.job_id, job, index, std::move(storage));
  if (avoid.empty()) {
    needs_[index]->jobs.push_back(job.job_id);
  } else {
    it->second.avoid = std::move(avoid);
    needs_[index]->jobs.push_front(job.job_id);
  }
  ++queued_;
  dirty_ = true;
  return true;
}

bool JobLedger::cancel(int64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return false;
  Entry& entry = it->second;
  if (entry.lease != 0) {
    end_lease(entry);
  } else {
    auto& q = needs_[entry.need]->jobs;
    if (auto pos = std::find(q.begin(), q.end(), job_id); pos != q.end()) {
      q.erase(pos);
      --queued_;
    }
  }
  jobs_.erase(it);
  return true;
}

void JobLedger::remove(const std::string& peer, const std::string& why) {
  drop_agent(peer, why, nullptr);
}

std::deque<int64_t>::iterator JobLedger::first_allowed(std::deque<int64_t>& jobs,
                                                       const std::string& peer) {
  // Checks are few and sit at the front: a short look past them finds an ordinary job.
  constexpr int kLookahead = 64;
  int looked = 0;
  for (auto it = jobs.begin(); it != jobs.end() && looked < kLookahead; ++it, ++looked) {
    const auto& avoid = jobs_.at(*it).avoid;
    if (std::find(avoid.begin(), avoid.end(), peer) == avoid.end()) return it;
  }
  return jobs.end();
}

void JobLedger::on_hello(const std::string& peer, const std::string& name,
                         const Capabilities& caps, int slots, TimePoint now) {
  if (agents_.count(peer)) {
    // The agent restarted: whatever it was running is gone with its old judges.
    drop_agent(peer, "re-registered", nullptr);
  }
  auto a = std::make_unique<Agent>();
  a->peer = peer;
  a->name = name;
  a->caps = caps;
  a->pool = pool_for(caps);
  a->slots = std::max(1, slots);
  a->incarnation = next_incarnation_++;
  if (free_slots_.empty()) {
    a->slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(nullptr);
  } else {
    a->slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[a->slot] = a.get();
  a->last_seen = now;
  a->last_sent = now;  // the dispatcher answers a HELLO at once
  a->last_result = now;
  a->seen_it = by_seen_.insert(by_seen_.end(), peer);
  a->sent_it = by_sent_.insert(by_sent_.end(), peer);
  Pool& pool = *pools_[a->pool];
  ++pool.agents;
  pool.free.emplace_back(a->slot, a->incarnation);
  a->in_free_list = true;
  total_slots_ += static_cast<size_t>(a->slots);
  agents_.emplace(peer, std::move(a));
  recompute_interval();
  dirty_ = true;
}

void JobLedger::recompute_interval() {
  auto wanted = std::chrono::milliseconds(
      options_.heartbeat_rate <= 0
          ? 0
          : static_cast<int64_t>(agents_.size()) * 1000 / options_.heartbeat_rate);
  auto for_eval = std::min(options_.eval_heartbeat_max,
                           std::chrono::milliseconds(static_cast<int64_t>(1.5 * eval_estimate_ms_)));
  interval_ = std::max({interval_, options_.heartbeat, wanted, for_eval});
}

bool JobLedger::take_interval_broadcast() {
  if (interval_ < 2 * told_interval_) return false;
  told_interval_ = interval_;
  return true;
}

void JobLedger::on_seen(const std::string& peer, TimePoint now) {
  Agent* found = find_agent(peer);
  if (found == nullptr) return;
  Agent& a = *found;
  a.last_seen = now;
  by_seen_.splice(by_seen_.end(), by_seen_, a.seen_it);
}

void JobLedger::on_bye(const std::string& peer) {
  if (agents_.count(peer)) drop_agent(peer, "said bye", nullptr);
}

void JobLedger::free_slot(Agent& a) {
  --a.busy;
  offer(a);
  dirty_ = true;
}

void JobLedger::offer(Agent& a) {
  Pool& pool = *pools_[a.pool];
  if (a.busy < a.slots) {
    if (!a.in_free_list) {
      pool.free.emplace_back(a.slot, a.incarnation);
      a.in_free_list = true;
    }
  } else if (a.busy < a.slots + options_.prefetch && !a.in_spare_list) {
    pool.spare.emplace_back(a.slot, a.incarnation);
    a.in_spare_list = true;
  }
}

JobLedger::ResultDisposition JobLedger::on_result(const std::string& peer,
                                                  const wire::Result& result, int* dispatches,
                                                  TimePoint now) {
  Agent* sender = find_agent(peer);
  auto live = leases_.find(result.lease);
  if (live == leases_.end()) {
    // An expired lease still holds its agent's slot until the late answer comes.
    if (sender != nullptr) {
      auto& late = sender->late;
      if (auto l = std::find(late.begin(), late.end(), result.job_id); l != late.end()) {
        late.erase(l);
        free_slot(*sender);
      }
    }
    bool was_issued = result.lease > 0 && result.lease < next_lease_;
    return was_issued ? ResultDisposition::stale_lease : ResultDisposition::unknown_job;
  }
  if (live->second != result.job_id) return ResultDisposition::unknown_job;
  auto job = jobs_.find(result.job_id);
  Entry& entry = job->second;
  if (sender == nullptr || entry.holder != sender) return ResultDisposition::not_holder;
  if (dispatches) *dispatches = entry.attempts;
  TimePoint sent = entry.sent;
  end_lease(entry);
  {
    Agent& agent = *sender;
    agent.strikes = 0;
    // The job started when it arrived or, if it waited behind another, when that one's result
    // left: what lies between is the agent's time for it (plus a round trip).
    auto took = now - std::max(sent, agent.last_result);
    agent.last_result = now;
    // Measured whatever the cap: the bridge's batch window follows it too (eval_dispatcher).
    // With a cap <= `heartbeat` it cannot move the interval (recompute_interval).
    if (took > Clock::duration::zero()) {
      double ms = std::chrono::duration<double, std::milli>(took).count();
      eval_estimate_ms_ = eval_estimate_ms_ == 0 ? ms : 0.95 * eval_estimate_ms_ + 0.05 * ms;
      recompute_interval();
    }
  }
  recycle(entry.frame.take_storage());
  jobs_.erase(job);
  return ResultDisposition::accepted;
}

void JobLedger::recycle(std::string storage) {
  // Bounded in count and in size: a burst's worth of ordinary frames, not a giant's buffer.
  constexpr std::size_t kMaxSpares = 128;
  constexpr std::size_t kMaxBytes = 64 << 10;
  if (storage.capacity() == 0 || storage.capacity() > kMaxBytes ||
      spare_frames_.size() >= kMaxSpares)
    return;
  spare_frames_.push_back(std::move(storage));
}

void JobLedger::end_lease(Entry& entry) {
  leases_.erase(entry.lease);
  entry.lease = 0;
  Agent* a = entry.holder;
  entry.holder = nullptr;
  if (a == nullptr) return;
  auto& jobs = a->jobs;
  if (auto j = std::find(jobs.begin(), jobs.end(), entry.job_id); j != jobs.end()) {
    jobs.erase(j);
    free_slot(*a);
  }
}

void JobLedger::release(int64_t job_id, const std::string& why, SweepOutcome* out) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  Entry& entry = it->second;
  if (entry.lease != 0) end_lease(entry);
  if (entry.attempts >= options_.max_attempts) {
    Abandoned gone;
    gone.job_id = job_id;
    gone.attempts = entry.attempts;
    gone.reason = "evaluation lost " + std::to_string(entry.attempts) + " times (last: " + why +
                  ")";
    jobs_.erase(it);
    (out ? out->abandoned : pending_abandoned_).push_back(std::move(gone));
    return;
  }
  needs_[entry.need]->jobs.push_front(job_id);
  ++queued_;
  dirty_ = true;
  if (out) out->requeued.push_back(job_id);
  spdlog::warn("job {} requeued: {}", job_id, why);
}

void JobLedger::drop_agent(const std::string& peer, const std::string& why, SweepOutcome* out) {
  auto it = agents_.find(peer);
  if (it == agents_.end()) return;
  std::unique_ptr<Agent> a = std::move(it->second);
  agents_.erase(it);
  if (cached_agent_ == a.get()) cached_agent_ = nullptr;
  slots_[a->slot] = nullptr;
  free_slots_.push_back(a->slot);
  by_seen_.erase(a->seen_it);
  by_sent_.erase(a->sent_it);
  --pools_[a->pool]->agents;
  total_slots_ -= static_cast<size_t>(a->slots);
  if (a->jobs.empty())
    spdlog::info("agent {} ({}) {}", a->name, peer.substr(0, 8), why);
  else
    spdlog::warn("agent {} ({}) {}; {} job(s) requeued", a->name, peer.substr(0, 8), why,
                 a->jobs.size());
  // Taken out first: releasing a job ends its lease, which would look for it in a->jobs (and
  // free a slot of an agent that is gone).
  std::vector<int64_t> jobs = std::move(a->jobs);
  a->jobs.clear();
  for (int64_t id : jobs) release(id, "agent " + a->name + " " + why, out);
}

JobLedger::SweepOutcome JobLedger::sweep(TimePoint now) {
  SweepOutcome out;
  out.abandoned = std::move(pending_abandoned_);
  pending_abandoned_.clear();
  auto silence_limit = interval_ * options_.liveness;
  while (!by_seen_.empty()) {
    std::string peer = by_seen_.front();
    if (now - agents_.at(peer)->last_seen <= silence_limit) break;
    drop_agent(peer, "went silent", &out);
    out.dead_agents.push_back(peer);
  }
  while (!deadlines_.empty() && deadlines_.top().first < now) {
    int64_t lease = deadlines_.top().second;
    deadlines_.pop();
    auto live = leases_.find(lease);
    if (live == leases_.end()) continue;  // answered or requeued before it expired
    Entry& entry = jobs_.at(live->second);
    Agent& a = *entry.holder;
    std::string holder = a.peer;
    // The agent may still be working on it: its slot stays taken until the late result.
    a.jobs.erase(std::find(a.jobs.begin(), a.jobs.end(), entry.job_id));
    a.late.push_back(entry.job_id);
    leases_.erase(live);
    entry.lease = 0;
    entry.holder = nullptr;
    release(entry.job_id, "lease on " + a.name + " expired", &out);
    if (++a.strikes >= options_.max_strikes) {
      drop_agent(holder, "let " + std::to_string(a.strikes) + " leases expire", &out);
      out.struck_out.push_back(holder);
    }
  }
  return out;
}

std::vector<JobLedger::Assignment> JobLedger::assign(TimePoint now) {
  std::vector<Assignment> out;
  if (!dirty_ || queued_ == 0) return out;
  dirty_ = false;
  for (auto& qp : needs_) {
    NeedQueue& q = *qp;
    if (q.jobs.empty()) continue;
    for (; q.pools_checked < pools_.size(); ++q.pools_checked) {
      if (q.need.satisfied_by(pools_[q.pools_checked]->caps))
        q.pools.push_back(static_cast<int>(q.pools_checked));
    }
    // Idle slots of every matching pool first; only then the agents' prefetch queues.
    for (int pass = 0; pass < 2; ++pass)
    for (int p : q.pools) {
      Pool& pool = *pools_[p];
      auto& list = pass == 0 ? pool.free : pool.spare;
      // Agents in a row that no queued job may go to (checks avoiding them): once every entry
      // of the list was such an agent, the list has nothing for this queue.
      size_t refused = 0;
      while (!q.jobs.empty() && !list.empty() && refused <= list.size()) {
        auto [slot, incarnation] = list.front();
        list.pop_front();
        Agent* found = slots_[slot];
        if (found == nullptr || found->incarnation != incarnation) continue;
        Agent& a = *found;
        (pass == 0 ? a.in_free_list : a.in_spare_list) = false;
        if (a.busy >= (pass == 0 ? a.slots : a.slots + options_.prefetch)) {
          offer(a);
          continue;
        }
        auto pick = q.jobs.begin();
        Entry* picked = &jobs_.at(*pick);
        if (!picked->avoid.empty()) {
          pick = first_allowed(q.jobs, a.peer);
          if (pick == q.jobs.end()) {
            offer(a);  // back of the list: another agent may take the checks
            ++refused;
            continue;
          }
          picked = &jobs_.at(*pick);
        }
        refused = 0;
        int64_t job_id = *pick;
        q.jobs.erase(pick);
        --queued_;
        Entry& entry = *picked;
        entry.attempts++;
        entry.lease = next_lease_++;
        entry.holder = &a;
        entry.sent = now;
        leases_.emplace(entry.lease, job_id);
        // A prefetched job may first wait for the one ahead of it on the agent.
        double runs = pass == 0 ? 1.0 : 2.0;
        auto lease_for = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                             runs * std::max(0.0, entry.timeout_s))) +
                         options_.lease_grace;
        deadlines_.emplace(now + lease_for, entry.lease);
        a.jobs.push_back(job_id);
        ++a.busy;
        a.last_sent = now;
        by_sent_.splice(by_sent_.end(), by_sent_, a.sent_it);
        // Round robin: the agent goes to the back of its list, so load spreads across hosts.
        offer(a);
        out.push_back(Assignment{a.peer, job_id, entry.lease,
                                 entry.frame.share_with_lease(entry.lease)});
      }
    }
  }
  return out;
}

std::vector<std::string> JobLedger::due_heartbeats(TimePoint now) {
  std::vector<std::string> out;
  while (!by_sent_.empty()) {
    const std::string& peer = by_sent_.front();
    Agent& a = *agents_.at(peer);
    if (now - a.last_sent < interval_) break;
    out.push_back(peer);
    a.last_sent = now;
    by_sent_.splice(by_sent_.end(), by_sent_, a.sent_it);
  }
  return out;
}

bool JobLedger::has_agent_for(const Requirement& need) const {
  for (const auto& pool : pools_)
    if (pool->agents > 0 && need.satisfied_by(pool->caps)) return true;
  return false;
}

bool JobLedger::has_agent_for(const Requirement& need,
                              const std::vector<std::string>& avoid) const {
  for (size_t p = 0; p < pools_.size(); ++p) {
    const Pool& pool = *pools_[p];
    if (pool.agents == 0 || !need.satisfied_by(pool.caps)) continue;
    int avoided = 0;
    for (const auto& peer : avoid) {
      const Agent* a = find_agent(peer);
      if (a != nullptr && a->pool == static_cast<int>(p)) ++avoided;
    }
    if (pool.agents > avoided) return true;
  }
  return false;
}

std::vector<std::string> JobLedger::agent_ids() const {
  std::vector<std::string> ids;
  ids.reserve(agents_.size());
  for (const auto& kv : agents_) ids.push_back(kv.first);
  return ids;
}

}  // namespace palladium
