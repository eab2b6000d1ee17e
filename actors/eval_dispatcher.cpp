#include "actors/eval_dispatcher.hpp"

#include <map>
#include <unordered_map>
#include <utility>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"

namespace palladium {
namespace {

using Clock = std::chrono::steady_clock;

// The dispatcher's messages to itself: lease the queued jobs now (see the eval_atom handler),
// and the heartbeat tick.
using pump_atom = caf::atom_constant<caf::atom("pump")>;
using DispatcherImpl =
    EvalDispatcherActor::extend<caf::reacts_to<pump_atom>, caf::reacts_to<beat_atom>>;

// One requester waiting for one job's answer: through `promise` (an (eval_atom, Job) request)
// or, with `requester` set, in an EvalAnswers message to it (an EvalBatch).
// Small on purpose: it is written when a job comes and read again only when its answer comes,
// a few hundred milliseconds and many megabytes of traffic later, so each of its cache lines
// (and each heap block it owns) is a cache miss per candidate.
// A result being checked (actors/result_check.hpp): the opinions so far, while another is asked.
struct Checking {
  FirstLook look;
  std::vector<Opinion> opinions;
  std::vector<std::string> avoid;  // of the opinion being asked for
};

struct Waiting {
  caf::typed_response_promise<Evaluated> promise;
  caf::actor requester;
  // Who asked, and the job id they asked with (their store's row id): the answer carries it
  // back; the agents only ever see the dispatcher's ticket (the key of `waiting`).
  caf::actor_addr from;
  int64_t request_id = 0;
  // The job (its code moved here, not copied, once its frame is packed): for the second tier
  // of a cascade and for a result check's second opinion.
  std::unique_ptr<wire::Job> job;
  std::unique_ptr<Checking> check;  // set once a final result is being checked
  bool cpu_tier = false;            // the job is in the CPU tier now
  int dispatches = 0;               // of the tiers already finished
};

// At most `per_s` log lines of one kind per second, so a flood cannot flood the log too.
class LogLimiter {
 public:
  explicit LogLimiter(int per_s) : per_s_(per_s) {}
  bool allow(Clock::time_point now) {
    if (now - window_ > std::chrono::seconds(1)) {
      if (suppressed_ > 0) spdlog::warn("({} similar messages suppressed)", suppressed_);
      window_ = now;
      count_ = 0;
      suppressed_ = 0;
    }
    if (++count_ <= per_s_) return true;
    ++suppressed_;
    return false;
  }

 private:
  int per_s_;
  int count_ = 0;
  int64_t suppressed_ = 0;
  Clock::time_point window_{};
};

struct DispatcherState {
  std::shared_ptr<FrameSink> sink;  // the agents, through the bridge in production
  std::unique_ptr<JobLedger> ledger;
  std::unique_ptr<AgentAdmission> admission;
  std::unique_ptr<ResultChecks> checks;
  // Jobs whose check is queued or leased in the ledger: watched by the tick, which settles a
  // check that no remaining agent can take.
  std::unordered_set<int64_t> checking;
  // Quarantined identities (CURVE keys; routing ids on a plaintext link), in order.
  std::unordered_map<std::string, size_t> quarantined;
  std::vector<Quarantine> quarantine_list;
  DispatcherOptions options;
  Requirement cpu_need;
  Requirement final_need;
  std::chrono::milliseconds tick{100};
  Clock::time_point tick_due;
  std::unordered_map<int64_t, Waiting> waiting;  // by ticket
  // The ticket of each (requester, its job id) being evaluated: one answer per job, and two
  // requesters may use the same id (each its own store's row ids).
  std::map<std::pair<caf::actor_addr, int64_t>, int64_t> tickets;
  // Tickets are minted from here on: the spawn time in microseconds, so that a restarted
  // coordinator's tickets never repeat those an agent may still hold from before.
  int64_t next_ticket = 1;
  DispatcherStats stats;
  LogLimiter warn_limit{20};
  bool pump_pending = false;  // a pump_atom is in the mailbox
  // Answers to EvalBatch jobs, per requester, sent when the current message is handled: one
  // message per requester per batch of frames, not one per job.
  std::unordered_map<caf::actor, EvalAnswers> outgoing;
  size_t answers_hint = 1;  // answers the current message may produce (its frames)
  static inline const char* name = "eval_dispatcher";
};

using Self = DispatcherImpl::stateful_pointer<DispatcherState>;

std::string short_id(const std::string& peer) { return peer.substr(0, 8); }

// The time leases, liveness and admission run on: the actor system's clock, which is the
// steady clock in production and the simulated one under CAF's test coordinator (a test
// advances it instead of sleeping). Stall traces (warn_if_slow) keep the real clock.
Clock::time_point now_of(Self self) { return self->clock().now(); }

void pump(Self self) {
  auto& st = self->state;
  auto assigned = st.ledger->assign(now_of(self));
  if (assigned.empty()) return;
  std::vector<OutboundFrame> frames;
  frames.reserve(assigned.size());
  for (auto& a : assigned) {
    frames.push_back(OutboundFrame{std::move(a.peer), std::string(), std::move(a.frame.buffer),
                                   a.frame.offset, a.frame.size});
  }
  st.stats.dispatches += static_cast<int64_t>(frames.size());
  st.sink->send_many(std::move(frames));
}

void submit(Self self, Waiting& w, wire::Job& job) {
  auto& st = self->state;
  // A re-timing job (codes set) times candidates already judged correct: it goes straight to
  // one slot of a final-tier agent, never split over the cascade's tiers.
  bool screen = st.options.cascade && st.final_need.backend != "interpret" &&
                job.codes.empty() && st.ledger->has_agent_for(st.cpu_need);
  w.cpu_tier = screen;
  // The ledger encodes the frame from the job in place (no copy of the code); the second
  // tier of a cascade sets its own check level.
  job.check_level = std::string(screen ? wire::kCheckCpu : wire::kCheckFull);
  st.ledger->submit(job, screen ? st.cpu_need : st.final_need);
  // Kept (its code moved, not copied): a second tier or a result check may need it again.
  w.job = std::make_unique<wire::Job>(std::move(job));
}

// Answers `w` (which the caller then erases).
// The answer by rvalue reference: it is some 20 strings, and an answer used to move it four
// times on its way into the message.
void answer(Self self, Waiting& w, Evaluated&& result, caf::error error) {
  auto& st = self->state;
  st.tickets.erase({w.from, w.request_id});
  if (!w.requester) {
    if (error)
      w.promise.deliver(std::move(error));
    else
      w.promise.deliver(std::move(result));
    return;
  }
  auto& answers = st.outgoing[w.requester].answers;
  // Room for a batch's answers at once: growing one by one moved every Result again.
  if (answers.capacity() == 0) answers.reserve(st.answers_hint);
  answers.push_back(EvalAnswer{w.request_id, std::move(result), std::move(error)});
}

void flush_answers(Self self) {
  auto& st = self->state;
  if (st.outgoing.empty()) return;
  for (auto& [requester, answers] : st.outgoing)
    self->send(caf::actor_cast<EvalRequester>(requester), evaluated_atom::value,
               std::move(answers));
  st.outgoing.clear();
}

void finish(Self self, std::unordered_map<int64_t, Waiting>::iterator it, Evaluated&& result) {
  auto& st = self->state;
  Waiting& w = it->second;
  result.agent.dispatches = w.dispatches;
  answer(self, w, std::move(result), caf::error{});
  st.checking.erase(it->first);
  st.waiting.erase(it);
  ++st.stats.answered;
}

std::string describe_peer(const std::string& agent_id, const std::string& peer) {
  return agent_id + " (" + short_id(peer) + ")";
}

void quarantine(Self self, const std::string& peer, const std::string& reason, int64_t job_id,
                const std::string& agent_id) {
  auto& st = self->state;
  if (st.quarantined.count(peer)) return;
  Quarantine q;
  q.agent_key = st.sink->authenticated() ? peer : std::string();
  q.agent_id = agent_id;
  q.reason = reason;
  q.job_id = job_id;
  st.quarantined.emplace(peer, st.quarantine_list.size());
  st.quarantine_list.push_back(q);
  ++st.stats.quarantined;
  spdlog::error("quarantined agent {}: {}; no more leases for its key, its results are marked "
                "for re-evaluation",
                describe_peer(agent_id, peer), reason);
  if (st.ledger->known(peer)) {
    st.ledger->remove(peer, "quarantined");
    st.admission->forget(peer);
  }
  st.sink->send(peer, wire::encode(wire::Bye{"coordinator", "quarantined: " + reason}));
}

// Asks for one more opinion on a checked job, from an agent none of the opinions came from.
// False if no such agent can take it.
bool ask_again(Self self, int64_t job_id, Waiting& w, bool any_slot) {
  auto& st = self->state;
  std::vector<std::string> avoid;
  if (!any_slot)
    for (const auto& o : w.check->opinions) avoid.push_back(o.peer);
  if (!st.ledger->has_agent_for(st.final_need, avoid)) return false;
  w.job->check_level = std::string(wire::kCheckFull);
  w.check->avoid = avoid;
  st.ledger->submit_check(*w.job, st.final_need, std::move(avoid));
  st.checking.insert(job_id);
  ++st.stats.checks;
  return true;
}

// Decides a checked job with the opinions it has, unless a tie-break is wanted and possible.
void conclude(Self self, std::unordered_map<int64_t, Waiting>::iterator it, bool may_ask) {
  auto& st = self->state;
  Waiting& w = it->second;
  Checking& c = *w.check;
  st.checking.erase(it->first);
  bool third = false;
  if (may_ask && c.opinions.size() == 2 && c.opinions[0].peer != c.opinions[1].peer) {
    std::vector<std::string> avoid{c.opinions[0].peer, c.opinions[1].peer};
    third = st.ledger->has_agent_for(st.final_need, avoid);
  }
  CheckDecision d = st.checks->decide(c.look, c.opinions, third);
  if (d.need_tiebreak) {
    if (ask_again(self, it->first, w, false)) return;
    d = st.checks->decide(c.look, c.opinions, false);
  }
  for (const auto& [peer, reason] : d.quarantine) {
    std::string name;
    for (const auto& o : c.opinions)
      if (o.peer == peer) name = o.result.agent.agent_id;
    quarantine(self, peer, reason, w.request_id, name);
  }
  finish(self, it, std::move(d.answer));
}

void deliver(Self self, int64_t job_id, Evaluated&& result, int dispatches,
             const std::string& peer) {
  auto& st = self->state;
  auto it = st.waiting.find(job_id);
  if (it == st.waiting.end()) return;
  Waiting& w = it->second;
  w.dispatches += dispatches;
  if (result.sitting) {
    // A re-timing's sitting: no verdict to check, nothing to re-time again.
    finish(self, it, std::move(result));
    return;
  }
  if (w.cpu_tier && result.evaluation.verdict == Verdict::correct) {
    // Survived the CPU tier: now the chip.
    w.cpu_tier = false;
    w.job->check_level = std::string(wire::kCheckFull);
    st.ledger->submit(*w.job, st.final_need);
    return;
  }
  if (w.cpu_tier) {
    // Failed on the CPU tier: answered as is (the chip never saw it, nothing to re-time).
    finish(self, it, std::move(result));
    return;
  }
  if (!w.check) {
    FirstLook look = st.checks->first_look(result, w.job->workload_id, w.request_id);
    if (!look.again()) {
      result.checks.plausibility = st.checks->plausibility_of(result, w.job->workload_id);
      finish(self, it, std::move(result));
      return;
    }
    w.check = std::make_unique<Checking>();
    w.check->look = std::move(look);
    w.check->opinions.push_back(Opinion{peer, std::move(result)});
    // A different agent when there is one; for a suspect timing alone, any slot will do.
    if (ask_again(self, job_id, w, false)) return;
    if (w.check->look.timing.suspect && ask_again(self, job_id, w, true)) return;
    conclude(self, it, false);
    return;
  }
  w.check->opinions.push_back(Opinion{peer, std::move(result)});
  conclude(self, it, true);
}

// Settles the checks that no remaining agent can take (they left, or were quarantined).
void settle_stranded_checks(Self self) {
  auto& st = self->state;
  if (st.checking.empty()) return;
  std::vector<int64_t> stranded;
  for (int64_t id : st.checking) {
    auto it = st.waiting.find(id);
    if (it == st.waiting.end() || !it->second.check) continue;
    if (!st.ledger->has_agent_for(st.final_need, it->second.check->avoid)) stranded.push_back(id);
  }
  for (int64_t id : stranded) {
    st.ledger->cancel(id);
    auto it = st.waiting.find(id);
    spdlog::warn("job {}: no agent left for its check; answered with the opinions it has", id);
    conclude(self, it, false);
  }
}

void fail_job(Self self, const JobLedger::Abandoned& gone) {
  auto& st = self->state;
  auto it = st.waiting.find(gone.job_id);
  if (it == st.waiting.end()) return;
  if (it->second.check) {
    // A check lost too often is not a verdict on the candidate: the opinions it has decide.
    spdlog::warn("job {}: its check was {}; answered with the opinions it has", gone.job_id,
                 gone.reason);
    conclude(self, it, false);
    return;
  }
  spdlog::error("job {}: {}; answering with a retryable error", gone.job_id, gone.reason);
  answer(self, it->second, Evaluated{}, make_error(Errc::unavailable, gone.reason));
  st.waiting.erase(it);
  ++st.stats.abandoned;
}

void apply_sweep(Self self, JobLedger::SweepOutcome& out) {
  auto& st = self->state;
  st.stats.requeued += static_cast<int64_t>(out.requeued.size());
  for (const auto& peer : out.dead_agents) st.admission->forget(peer);
  for (const auto& peer : out.struck_out) {
    st.admission->forget(peer);
    st.sink->send(peer, wire::encode(wire::Bye{"coordinator", "dropped: leases expired"}));
  }
  for (const auto& gone : out.abandoned) fail_job(self, gone);
}

void on_hello(Self self, const ZmqInbound& in, const wire::Hello& hello, Clock::time_point now) {
  auto& st = self->state;
  if (auto q = st.quarantined.find(in.peer); q != st.quarantined.end()) {
    ++st.stats.refused_hellos;
    if (st.warn_limit.allow(now))
      spdlog::warn("refused HELLO from quarantined {} at {}", short_id(in.peer), in.address);
    st.sink->send(in.peer, wire::encode(wire::Bye{
                                 "coordinator", "refused: quarantined: " +
                                                    st.quarantine_list[q->second].reason}));
    return;
  }
  bool registered = st.ledger->known(in.peer);
  auto decision = st.admission->admit(in.peer, in.address, registered, hello, now);
  if (!decision.admitted) {
    ++st.stats.refused_hellos;
    if (st.warn_limit.allow(now))
      spdlog::warn("refused HELLO from {} at {}: {}", short_id(in.peer), in.address,
                   decision.reason);
    st.sink->send(in.peer, wire::encode(wire::Bye{"coordinator", "refused: " + decision.reason}));
    return;
  }
  spdlog::info("agent {} ({} at {}) joined: backend {}, device {}, jax {}, libtpu {}, {} slot(s), "
               "stages {}",
               hello.agent_id, short_id(in.peer), in.address, hello.backend, hello.device_kind,
               hello.jax_version, hello.libtpu_version.empty() ? "-" : hello.libtpu_version,
               hello.slots, stage_names(decision.caps.stages));
  st.ledger->on_hello(in.peer, hello.agent_id, decision.caps, hello.slots, now);
  // The welcome: tells the agent it is registered and which heartbeat interval to keep.
  auto interval = static_cast<int>(st.ledger->heartbeat_interval().count());
  st.sink->send(in.peer, wire::encode(wire::Heartbeat{"coordinator", interval}));
}

void on_result(Self self, const ZmqInbound& in, wire::Result& msg, Clock::time_point now) {
  auto& st = self->state;
  int dispatches = 0;
  switch (st.ledger->on_result(in.peer, msg, &dispatches, now)) {
    case JobLedger::ResultDisposition::accepted: {
      // The agent facts come from the admitted HELLO and the link, not from the frame's
      // claims: on a CURVE link the peer is the agent's public key.
      Evaluated answer{std::move(msg.evaluation), AgentFacts{}, CheckFindings{}, std::nullopt};
      AgentFacts& agent = answer.agent;
      agent.agent_key = st.sink->authenticated() ? in.peer : std::string();
      agent.agent_id = msg.agent_id;
      agent.backend = msg.backend;
      if (const Capabilities* caps = st.ledger->capabilities(in.peer)) {
        agent.backend = caps->backend;
        agent.device_kind = caps->device_kind;
        agent.jax_version = caps->jax_version;
        agent.libtpu_version = caps->libtpu_version;
      }
      deliver(self, msg.job_id, std::move(answer), dispatches, in.peer);
      return;
    }
    case JobLedger::ResultDisposition::stale_lease:
      // The late result may have freed the agent's slot: the batch's pump() will use it.
      spdlog::info("dropping a late result for job {} (lease {}) from {}", msg.job_id, msg.lease,
                   short_id(in.peer));
      break;
    case JobLedger::ResultDisposition::not_holder:
      if (st.warn_limit.allow(now))
        spdlog::warn("refused a result for job {} from {}: another agent holds its lease",
                     msg.job_id, short_id(in.peer));
      break;
    case JobLedger::ResultDisposition::unknown_job:
      if (st.warn_limit.allow(now))
        spdlog::warn("refused a result for job {} (lease {}) from {}: no such lease", msg.job_id,
                     msg.lease, short_id(in.peer));
      break;
  }
  ++st.stats.refused_results;
}

// A re-timing's answer: accepted like a result (only from the lease holder), answered as an
// Evaluated carrying the sitting.
void on_retimed(Self self, const ZmqInbound& in, wire::Retimed& msg, Clock::time_point now) {
  auto& st = self->state;
  wire::Result lease;  // what the ledger reads of a result: its job and lease
  lease.job_id = msg.job_id;
  lease.lease = msg.lease;
  int dispatches = 0;
  if (st.ledger->on_result(in.peer, lease, &dispatches, now) !=
      JobLedger::ResultDisposition::accepted) {
    ++st.stats.refused_results;
    if (st.warn_limit.allow(now))
      spdlog::warn("refused a re-timing for job {} (lease {}) from {}", msg.job_id, msg.lease,
                   short_id(in.peer));
    return;
  }
  Evaluated answer;
  answer.agent.agent_key = st.sink->authenticated() ? in.peer : std::string();
  answer.agent.agent_id = msg.agent_id;
  answer.agent.backend = msg.backend;
  if (const Capabilities* caps = st.ledger->capabilities(in.peer)) {
    answer.agent.backend = caps->backend;
    answer.agent.device_kind = caps->device_kind;
    answer.agent.jax_version = caps->jax_version;
    answer.agent.libtpu_version = caps->libtpu_version;
  }
  msg.sitting.job_id = msg.job_id;
  answer.sitting = std::move(msg.sitting);
  deliver(self, msg.job_id, std::move(answer), dispatches, in.peer);
}

void on_frame(Self self, const ZmqInbound& in) {
  auto& st = self->state;
  auto now = now_of(self);
  auto lag = std::chrono::duration_cast<std::chrono::microseconds>(now - in.received).count();
  if (lag > st.stats.longest_inbound_lag_us) st.stats.longest_inbound_lag_us = lag;
  auto decoded = wire::decode(in.payload);
  if (!decoded.ok()) {
    if (st.warn_limit.allow(now))
      spdlog::warn("dropping malformed frame from {} at {}: {}", short_id(in.peer), in.address,
                   decoded.error);
    return;
  }
  st.ledger->on_seen(in.peer, now);
  std::visit(
      [&](auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, wire::Hello>) {
          on_hello(self, in, msg, now);
        } else if constexpr (std::is_same_v<T, wire::Result>) {
          on_result(self, in, msg, now);
        } else if constexpr (std::is_same_v<T, wire::Retimed>) {
          on_retimed(self, in, msg, now);
        } else if constexpr (std::is_same_v<T, wire::Bye>) {
          if (st.ledger->known(in.peer)) {
            spdlog::info("agent {} ({}) left: {}", msg.agent_id, short_id(in.peer), msg.reason);
            st.ledger->on_bye(in.peer);
            st.admission->forget(in.peer);
            JobLedger::SweepOutcome none = st.ledger->sweep(now);  // collects abandoned jobs
            apply_sweep(self, none);
          }
        } else if constexpr (std::is_same_v<T, wire::Heartbeat>) {
          if (!st.ledger->known(in.peer)) {
            // A coordinator that restarted does not know the agent: tell it to say hello.
            st.sink->send(in.peer, wire::encode(wire::Bye{"coordinator", "unknown agent"}));
          }
        } else {
          if (st.warn_limit.allow(now))
            spdlog::warn("dropping unexpected '{}' frame from agent {}", wire::type_name(msg),
                         short_id(in.peer));
        }
      },
      *decoded.message);
}

void on_tick(Self self) {
  auto& st = self->state;
  auto now = now_of(self);
  auto late = std::chrono::duration_cast<std::chrono::microseconds>(now - st.tick_due).count();
  if (late > st.stats.longest_tick_late_us) st.stats.longest_tick_late_us = late;
  auto sweep = st.ledger->sweep(now);
  apply_sweep(self, sweep);
  settle_stranded_checks(self);
  auto interval = static_cast<int>(st.ledger->heartbeat_interval().count());
  std::vector<std::pair<std::string, std::string>> beats;
  if (st.ledger->take_interval_broadcast()) {
    // The fleet doubled: everyone learns the longer interval (a cost of N once per doubling).
    spdlog::info("{} agents: heartbeat interval now {} ms", st.ledger->agent_count(), interval);
    std::string beat = wire::encode(wire::Heartbeat{"coordinator", interval});
    for (auto& peer : st.ledger->agent_ids()) beats.emplace_back(std::move(peer), beat);
    st.ledger->due_heartbeats(now);  // they all count as sent to now
  } else {
    std::string beat = wire::encode(wire::Heartbeat{"coordinator", interval});
    for (auto& peer : st.ledger->due_heartbeats(now)) beats.emplace_back(std::move(peer), beat);
  }
  st.stats.heartbeats_sent += static_cast<int64_t>(beats.size());
  st.sink->send_many(std::move(beats));
  pump(self);
  auto window = batch_window_for(st.ledger->typical_eval(), st.options.max_batch_window);
  if (window != st.sink->batch_window()) st.sink->set_batch_window(window);
  st.tick = std::max(std::chrono::milliseconds(20), st.ledger->heartbeat_interval() / 5);
  st.tick_due = now + st.tick;
}

// A stall trace: what held the dispatcher for over 200 ms, in the log (warn). `frames` is the
// batch's size, or 0 for the heartbeat tick.
void warn_if_slow(Self self, Clock::time_point start, size_t frames) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  if (ms <= 200) return;
  spdlog::warn("dispatcher: {} took {} ms ({} agents, {} queued, {} in flight)",
               frames == 0 ? std::string("the heartbeat tick")
                           : "a batch of " + std::to_string(frames) + " frames",
               ms, self->state.ledger->agent_count(), self->state.ledger->queued(),
               self->state.ledger->in_flight());
}

DispatcherStats snapshot(Self self) {
  auto& st = self->state;
  DispatcherStats s = st.stats;
  s.agents = static_cast<int32_t>(st.ledger->agent_count());
  s.slots = static_cast<int64_t>(st.ledger->total_slots());
  s.queued = static_cast<int64_t>(st.ledger->queued());
  s.in_flight = static_cast<int64_t>(st.ledger->in_flight());
  s.heartbeat_interval_ms = st.ledger->heartbeat_interval().count();
  s.batch_window_us = st.sink->batch_window().count();
  return s;
}

// Takes a job for evaluation under a fresh ticket (its code packed into the frame, or moved,
// not copied, into Waiting for a cascade); false if `from` already has a job of its id being
// evaluated (one answer per job).
bool accept(Self self, wire::Job& job, caf::typed_response_promise<Evaluated> promise,
            caf::actor requester, const caf::actor_addr& from) {
  auto& st = self->state;
  if (!st.tickets.try_emplace({from, job.job_id}, st.next_ticket).second) return false;
  int64_t ticket = st.next_ticket++;
  Waiting& w = st.waiting[ticket];
  w.promise = std::move(promise);
  w.requester = std::move(requester);
  w.from = from;
  w.request_id = job.job_id;
  job.job_id = ticket;
  ++st.stats.submitted;
  submit(self, w, job);
  // Requests come in bursts (a batch of results answers as many requesters, which send
  // their next jobs at once): lease them all in one pump, behind the burst in the
  // mailbox, so the bridge gets one send_many per burst rather than one per job.
  if (!st.pump_pending) {
    st.pump_pending = true;
    self->send(self, pump_atom::value);
  }
  return true;
}

caf::error duplicate_job(int64_t id) {
  return make_error(Errc::already_exists,
                    "job " + std::to_string(id) + " is already being evaluated");
}

DispatcherImpl::behavior_type eval_dispatcher(Self self, std::shared_ptr<FrameSink> sink,
                                              DispatcherOptions options) {
  auto& st = self->state;
  st.sink = sink;
  st.options = options;
  st.ledger = std::make_unique<JobLedger>(options.ledger);
  st.admission = std::make_unique<AgentAdmission>(options.admission);
  st.next_ticket = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  st.checks = std::make_unique<ResultChecks>(options.checks);
  st.final_need = options.target;
  st.final_need.stages = required_stages(wire::kCheckFull);
  st.cpu_need = Requirement{"interpret", "cpu", options.target.jax_version, "",
                            required_stages(wire::kCheckCpu)};
  st.tick = std::max(std::chrono::milliseconds(20), options.ledger.heartbeat / 5);
  st.tick_due = now_of(self) + st.tick;
  self->attach_functor([sink](const caf::error&) { sink->stop(); });
  // The tick and the agents' frames are urgent messages (priority high): each round of CAF's
  // mailbox serves urgent messages first, then a few normal ones, so a burst of thousands of
  // eval requests (a run's start, the bench's feeder) no longer holds results, HELLOs and
  // liveness behind it. Frames keep their order among themselves, and requests theirs.
  self->delayed_send<caf::message_priority::high>(self, st.tick, beat_atom::value);
  return {
      // The job by mutable reference: CAF hands over the message's own Job (it copies only a
      // message shared with another receiver), so its code is moved, not copied, into Waiting.
      [=](eval_atom, wire::Job& job) -> caf::result<Evaluated> {
        auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
        if (self->state.tickets.count({from, job.job_id})) return duplicate_job(job.job_id);
        auto rp = self->make_response_promise<Evaluated>();
        accept(self, job, rp, caf::actor{}, from);
        return rp;
      },
      // The batched form: no response; each job's answer comes in an EvalAnswers message.
      [=](eval_atom, EvalBatch& batch) {
        auto requester = caf::actor_cast<caf::actor>(self->current_sender());
        if (!requester) return;  // an anonymous sender could not be answered
        for (auto& job : batch.jobs) {
          if (!accept(self, job, caf::typed_response_promise<Evaluated>{}, requester,
                      requester.address()))
            self->state.outgoing[requester].answers.push_back(
                EvalAnswer{job.job_id, Evaluated{}, duplicate_job(job.job_id)});
        }
        flush_answers(self);
      },
      [=](pump_atom) {
        self->state.pump_pending = false;
        pump(self);
      },
      [=](const ZmqInboundBatch& batch) {
        auto start = Clock::now();
        // Most frames are results, often one requester's; capped, since an answer is ~700 bytes
        // and a run's many searches each get a few.
        self->state.answers_hint = std::min<size_t>(batch.frames.size(), 64);
        for (const auto& in : batch.frames) on_frame(self, in);
        pump(self);  // once per batch: results free slots, HELLOs add some
        flush_answers(self);
        warn_if_slow(self, start, batch.frames.size());
      },
      [=](beat_atom) {
        auto start = Clock::now();
        on_tick(self);
        flush_answers(self);
        warn_if_slow(self, start, 0);
        self->delayed_send<caf::message_priority::high>(self, self->state.tick,
                                                        beat_atom::value);
      },
      [=](quarantine_atom) { return self->state.quarantine_list; },
      [=](stats_atom) { return snapshot(self); },
      [=](stats_atom, bool restart_longest) {
        auto s = snapshot(self);
        if (restart_longest) {
          self->state.stats.longest_inbound_lag_us = 0;
          self->state.stats.longest_tick_late_us = 0;
        }
        return s;
      },
  };
}

}  // namespace

std::chrono::microseconds batch_window_for(std::chrono::microseconds typical_eval,
                                           std::chrono::microseconds cap) {
  auto window = std::min(cap, typical_eval / 200);
  return window < std::chrono::microseconds(100) ? std::chrono::microseconds(0) : window;
}

EvalDispatcherActor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<FrameSink> sink,
                                          DispatcherOptions options) {
  return sys.spawn(eval_dispatcher, std::move(sink), std::move(options));
}

EvalDispatcherActor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<ZmqBridge> bridge,
                                          DispatcherOptions options) {
  auto dispatcher = spawn_eval_dispatcher(sys, bridge_sink(bridge), std::move(options));
  bridge->start([dispatcher](std::vector<InboundFrame> frames) {
    caf::anon_send<caf::message_priority::high>(dispatcher, ZmqInboundBatch{std::move(frames)});
  });
  return dispatcher;
}

}  // namespace palladium
