#include "actors/run_actor.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "actors/eval_dispatcher.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/messages.hpp"

namespace palladium {
namespace {

// The heartbeat the run sends itself each second (progress line, caps, quarantines).
using RunImpl = RunActor::extend<caf::reacts_to<beat_atom>>;

struct RunState {
  RunPlan plan;
  StoreActor store;
  LlmGatewayActor llm_gateway;
  EvalDispatcherActor dispatcher;
  caf::typed_response_promise<std::string> done;
  std::map<caf::actor_addr, int> running;  // live search -> its index
  std::vector<WorkloadSearchActor> searches;  // by index
  std::vector<std::optional<SearchStatus>> reported;  // since the last epoch
  std::vector<bool> ended;
  std::vector<int> limits;  // the limit each search holds
  std::unique_ptr<GlobalAllocator> allocator;
  int cap = 0;
  int spent = 0, candidates = 0, reused = 0, evaluated = 0, correct = 0, other_calls = 0;
  int agents = 0, searches_failed = 0, total_units = 0;
  // What the gateway and the dispatcher last said they hold, for the progress line (-1: not
  // asked yet, or the peer does not answer stats).
  int llm_in_flight = -1, llm_queued = -1;
  int64_t evals_in_flight = -1, evals_queued = -1;
  std::chrono::steady_clock::time_point started, last_line;
  std::set<std::string> quarantines_stored;  // agent_key|agent_id already written
  bool finishing = false;
  static inline const char* name = "run";
};

using Self = RunImpl::stateful_pointer<RunState>;

void print_progress(Self self, bool final_line) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - st.started).count();
  char line[512];
  int n = std::snprintf(line, sizeof line,
                "[run %lld] agents %d | spent %d/%d | candidates %d (%d reused) | evaluated %d | "
                "correct %d | other calls %d | %llds",
                static_cast<long long>(st.plan.run_id), st.agents, st.spent, st.total_units,
                st.candidates, st.reused, st.evaluated, st.correct, st.other_calls,
                static_cast<long long>(secs));
  auto append = [&](const char* fmt, auto... args) {
    if (n >= 0 && static_cast<size_t>(n) < sizeof line)
      n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, args...);
  };
  if (st.llm_in_flight >= 0)
    append(" | LLM %d in flight, %d queued", st.llm_in_flight, st.llm_queued);
  if (st.evals_in_flight >= 0)
    append(" | evaluating %lld, %lld queued", static_cast<long long>(st.evals_in_flight),
           static_cast<long long>(st.evals_queued));
  // From the observed rate of spent units; none before the first one is spent.
  if (!final_line && st.spent > 0 && st.total_units > st.spent && secs > 0)
    append(" | ETA %llds", static_cast<long long>((st.total_units - st.spent) * secs / st.spent));
  if (st.plan.live_progress) {
    std::fprintf(stderr, "\r\033[K%s%s", line, final_line ? "\n" : "");
  } else if (final_line || now - st.last_line >= std::chrono::seconds(10)) {
    std::fprintf(stderr, "%s\n", line);
    st.last_line = now;
  }
  std::fflush(stderr);
}

// Writes the keys the dispatcher quarantined since the last call (the store marks their
// results for re-evaluation), then runs `then`. A dispatcher that does not answer in time
// has none this time.
void store_quarantines(Self self, std::function<void()> then) {
  self->request(self->state.dispatcher, self->state.plan.timeouts.status, quarantine_atom::value)
      .then(
          [=](const std::vector<Quarantine>& found) {
            auto& st = self->state;
            for (const auto& q : found) {
              if (!st.quarantines_stored.insert(q.agent_key + "|" + q.agent_id).second) continue;
              QuarantineRecord r;
              r.run_id = st.plan.run_id;
              r.agent_key = q.agent_key;
              r.agent_id = q.agent_id;
              r.reason = q.reason;
              r.job_id = q.job_id;
              self->request(st.store, st.plan.timeouts.store, put_quarantine_atom::value, r)
                  .then(
                      [=](int64_t marked) {
                        spdlog::error("run {}: agent {} quarantined ({}); {} stored result(s) "
                                      "marked for re-evaluation",
                                      r.run_id, r.agent_id, r.reason, marked);
                      },
                      [=](caf::error& e) {
                        spdlog::error("run {}: storing the quarantine of agent {} failed: {}",
                                      r.run_id, r.agent_id, to_string(e));
                      });
            }
            if (then) then();
          },
          [=](caf::error&) {
            if (then) then();
          });
}

void finish_run(Self self);

void maybe_finish(Self self) {
  auto& st = self->state;
  if (!st.running.empty() || st.finishing) return;
  st.finishing = true;
  // The last quarantines are written before the run is marked finished.
  store_quarantines(self, [=] { finish_run(self); });
}

void finish_run(Self self) {
  auto& st = self->state;
  print_progress(self, true);
  std::string status = st.searches_failed ? "incomplete" : "finished";
  self->request(st.store, st.plan.timeouts.store, finish_atom::value, st.plan.run_id, status)
      .then([=](bool) { self->state.done.deliver(status); self->quit(); },
            [=](caf::error& e) {
              self->state.done.deliver(std::string("failed: ") + to_string(e));
              self->quit();
            });
}

// Global reallocation: once every search is idle or done, grant new limits.
void maybe_epoch(Self self) {
  auto& st = self->state;
  if (!st.allocator) return;
  std::vector<SearchStatus> statuses;
  for (size_t i = 0; i < st.reported.size(); ++i) {
    if (!st.reported[i]) return;  // still working
    statuses.push_back(*st.reported[i]);
  }
  if (st.running.empty()) return;
  std::vector<GlobalAllocator::Grant> grants;
  try {
    grants = st.allocator->at_epoch(statuses);
  } catch (const std::exception& e) {
    spdlog::error("run {}: global reallocation failed: {}", st.plan.run_id, e.what());
    for (auto& a : st.searches) self->send_exit(a, caf::exit_reason::user_shutdown);
    return;
  }
  for (const auto& g : grants) {
    const auto i = static_cast<size_t>(g.search);
    st.limits[i] = g.limit;
    if (st.ended[i]) {
      st.reported[i]->limit = g.limit;  // done: its status stands for the next epochs
      continue;
    }
    st.reported[i].reset();
    self->send(st.searches[i], budget_atom::value, g.limit, g.open);
  }
}

// A search that died will not report again; it keeps (as spent) the whole
// limit it held, since what it spent last is unknown.
SearchStatus ended_status(const RunState& st, size_t i) {
  SearchStatus s;
  s.done = true;
  s.limit = st.limits[i];
  s.spent = st.limits[i];
  return s;
}

void update_caps(Self self) {
  auto& st = self->state;
  if (st.running.empty()) return;
  const long slots = std::max(1L, static_cast<long>(st.agents) * st.plan.slots_per_agent);
  const long live = static_cast<long>(st.running.size());
  const int cap = static_cast<int>(
      std::max(1L, (st.plan.in_flight_per_slot * slots + live - 1) / live));
  if (cap == st.cap) return;
  st.cap = cap;
  for (auto& [addr, i] : st.running) {
    self->send(st.searches[static_cast<size_t>(i)], inflight_atom::value, cap);
  }
}

RunImpl::behavior_type run_actor(Self self, RunPlan plan, StoreActor store,
                                LlmGatewayActor llm_gateway, EvalDispatcherActor dispatcher) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.store = store;
  st.llm_gateway = llm_gateway;
  st.dispatcher = dispatcher;
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    auto it = st.running.find(dm.source);
    if (it == st.running.end()) return;
    const auto i = static_cast<size_t>(it->second);
    st.running.erase(it);
    if (dm.reason) st.searches_failed++;
    if (!st.ended[i]) {
      st.ended[i] = true;
      st.reported[i] = ended_status(st, i);
    }
    maybe_epoch(self);
    maybe_finish(self);
  });
  return {
      [=](start_atom) -> caf::result<std::string> {
        auto& st = self->state;
        st.done = self->make_response_promise<std::string>();
        st.started = st.last_line = std::chrono::steady_clock::now();
        const int n = static_cast<int>(st.plan.searches.size());
        if (st.plan.global) {
          st.allocator = std::make_unique<GlobalAllocator>(n, st.plan.budget_per_search,
                                                           st.plan.global_config);
        }
        st.total_units = n * st.plan.budget_per_search;
        st.reported.assign(static_cast<size_t>(n), std::nullopt);
        st.ended.assign(static_cast<size_t>(n), false);
        st.limits.assign(static_cast<size_t>(n), st.allocator ? st.allocator->initial_limit()
                                                              : st.plan.budget_per_search);
        st.cap = std::max(1, st.plan.in_flight_per_slot);
        for (int i = 0; i < n; ++i) {
          WorkloadSearchSpec spec = st.plan.searches[static_cast<size_t>(i)];
          spec.index = i;
          spec.budget = st.limits[static_cast<size_t>(i)];
          spec.budget_open = static_cast<bool>(st.allocator);
          spec.in_flight = st.cap;
          spec.timeouts = st.plan.timeouts;
          auto a = spawn_workload_search(self->system(), std::move(spec),
                                         SearchPeers{st.store, st.llm_gateway, st.dispatcher,
                                                     caf::actor_cast<RunActor>(self)});
          self->monitor(a);
          st.running[a.address()] = i;
          st.searches.push_back(a);
        }
        self->delayed_send(self, std::chrono::seconds(1), beat_atom::value);
        maybe_finish(self);  // an empty plan ends at once
        return st.done;
      },
      [=](status_atom, int index, const SearchStatus& status) {
        auto& st = self->state;
        const auto i = static_cast<size_t>(index);
        if (i >= st.reported.size() || st.ended[i]) return;
        st.reported[i] = status;
        if (status.done) st.ended[i] = true;
        maybe_epoch(self);
      },
      [=](progress_atom, const ProgressEvent& ev) {
        auto& st = self->state;
        switch (ev.kind) {
          case ProgressEvent::generated:
            st.spent += ev.units;
            if (is_candidate_role(ev.role)) {
              st.candidates++;
              if (ev.reused) st.reused++;
            } else {
              st.other_calls++;
            }
            break;
          case ProgressEvent::evaluated:
            st.evaluated++;
            if (ev.correct) st.correct++;
            break;
        }
      },
      [=](beat_atom) {
        // The gateway's and the dispatcher's queues, for the progress line, and the agent count
        // the caps follow. A peer that does not answer stats in time leaves its queues out of
        // the line.
        self->request(self->state.llm_gateway, self->state.plan.timeouts.status, stats_atom::value)
            .then(
                [=](const LlmGatewayStats& s) {
                  self->state.llm_in_flight = s.calls.in_flight;
                  self->state.llm_queued = s.calls.queued;
                },
                [=](caf::error&) { self->state.llm_in_flight = -1; });
        self->request(self->state.dispatcher, self->state.plan.timeouts.status, stats_atom::value)
            .then(
                [=](const DispatcherStats& s) {
                  self->state.evals_in_flight = s.in_flight;
                  self->state.evals_queued = s.queued;
                  self->state.agents = s.agents;
                  update_caps(self);
                  if (!self->state.running.empty()) print_progress(self, false);
                },
                [=](caf::error&) { self->state.evals_in_flight = -1; });
        store_quarantines(self, nullptr);
        self->delayed_send(self, std::chrono::seconds(1), beat_atom::value);
      },
  };
}

}  // namespace

RunActor spawn_run(caf::actor_system& sys, RunPlan plan, StoreActor store,
                   LlmGatewayActor llm_gateway, EvalDispatcherActor dispatcher) {
  return sys.spawn(run_actor, std::move(plan), std::move(store), std::move(llm_gateway),
                   std::move(dispatcher));
}

}  // namespace palladium
