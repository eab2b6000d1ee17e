#include "actors/job_ledger.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace palladium {

JobLedger::JobLedger(Options options) : options_(options) {}

void JobLedger::submit(wire::Job job) {
  auto id = job.job_id;
  if (jobs_.count(id) || finished_.count(id)) return;
  jobs_.emplace(id, Entry{std::move(job), 0});
  queue_.push_back(id);
}

void JobLedger::on_hello(const std::string& peer, const wire::Hello& hello, TimePoint now) {
  auto it = agents_.find(peer);
  if (it != agents_.end()) {
    // The agent restarted: whatever it was running is gone with its old sidecars.
    drop_agent(peer, "re-registered", nullptr);
  }
  Agent a;
  a.slots = std::max(1, hello.slots);
  a.last_seen = now;
  agents_.emplace(peer, std::move(a));
}

void JobLedger::on_seen(const std::string& peer, TimePoint now) {
  auto it = agents_.find(peer);
  if (it != agents_.end()) it->second.last_seen = now;
}

void JobLedger::on_bye(const std::string& peer) {
  if (agents_.count(peer)) drop_agent(peer, "said bye", nullptr);
}

JobLedger::ResultDisposition JobLedger::on_result(const std::string& peer,
                                                  const wire::Result& result) {
  auto id = result.job_id;
  if (finished_.count(id)) return ResultDisposition::duplicate;
  auto job = jobs_.find(id);
  if (job == jobs_.end()) return ResultDisposition::unknown_job;
  // Accept a result from any agent, even one whose lease expired: the work is
  // done and verdicts do not depend on which agent ran it.
  if (auto lease = leases_.find(id); lease != leases_.end()) {
    if (auto a = agents_.find(lease->second.peer); a != agents_.end()) a->second.jobs.erase(id);
    leases_.erase(lease);
  }
  if (auto a = agents_.find(peer); a != agents_.end()) a->second.jobs.erase(id);
  queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
  jobs_.erase(job);
  finished_.insert(id);
  return ResultDisposition::accepted;
}

void JobLedger::release(int64_t job_id, const std::string& why, SweepOutcome* out) {
  leases_.erase(job_id);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  if (it->second.attempts >= options_.max_attempts) {
    wire::Result r;
    r.job_id = job_id;
    r.agent_id = "coordinator";
    r.verdict = "crash";
    r.stage = "dispatch";
    r.error = "evaluation lost " + std::to_string(it->second.attempts) +
              " times (last: " + why + "); giving up so the run can finish";
    r.error_signature = "evaluation lost repeatedly";
    jobs_.erase(it);
    finished_.insert(job_id);
    (out ? out->abandoned : pending_abandoned_).push_back(std::move(r));
    return;
  }
  queue_.push_front(job_id);
  if (out) out->requeued.push_back(job_id);
  spdlog::warn("job {} requeued: {}", job_id, why);
}

void JobLedger::drop_agent(const std::string& peer, const std::string& why, SweepOutcome* out) {
  auto it = agents_.find(peer);
  if (it == agents_.end()) return;
  auto jobs = it->second.jobs;
  agents_.erase(it);
  if (jobs.empty())
    spdlog::info("agent {} {}", peer, why);
  else
    spdlog::warn("agent {} {}; {} job(s) requeued", peer, why, jobs.size());
  for (auto id : jobs) release(id, "agent " + peer + " " + why, out);
}

JobLedger::SweepOutcome JobLedger::sweep(TimePoint now) {
  SweepOutcome out;
  out.abandoned = std::move(pending_abandoned_);
  pending_abandoned_.clear();
  auto silence_limit = options_.heartbeat * options_.liveness;
  std::vector<std::string> dead;
  for (const auto& [peer, a] : agents_)
    if (now - a.last_seen > silence_limit) dead.push_back(peer);
  for (const auto& peer : dead) {
    drop_agent(peer, "went silent", &out);
    out.dead_agents.push_back(peer);
  }
  std::vector<int64_t> expired;
  for (const auto& [id, lease] : leases_)
    if (now > lease.deadline) expired.push_back(id);
  for (auto id : expired) {
    auto peer = leases_[id].peer;
    if (auto a = agents_.find(peer); a != agents_.end()) a->second.jobs.erase(id);
    release(id, "lease on " + peer + " expired", &out);
  }
  return out;
}

std::vector<std::pair<std::string, wire::Job>> JobLedger::assign(TimePoint now) {
  std::vector<std::pair<std::string, wire::Job>> out;
  while (!queue_.empty()) {
    // The agent with the most free slots spreads load evenly across hosts.
    std::string best;
    int best_free = 0;
    for (const auto& [peer, a] : agents_) {
      int free = a.slots - static_cast<int>(a.jobs.size());
      if (free > best_free) {
        best_free = free;
        best = peer;
      }
    }
    if (best_free <= 0) break;
    auto id = queue_.front();
    queue_.pop_front();
    auto& entry = jobs_.at(id);
    entry.attempts++;
    auto lease = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::duration<double>(entry.job.timeout_s)) +
                 options_.lease_grace;
    leases_[id] = Lease{best, now + lease};
    agents_[best].jobs.insert(id);
    out.emplace_back(best, entry.job);
  }
  return out;
}

std::vector<std::string> JobLedger::agent_ids() const {
  std::vector<std::string> ids;
  for (const auto& kv : agents_) ids.push_back(kv.first);
  return ids;
}

}  // namespace palladium
