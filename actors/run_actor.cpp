#include "actors/run_actor.hpp"

#include <chrono>
#include <cstdio>
#include <set>

#include <spdlog/spdlog.h>

#include "actors/messages.hpp"

namespace palladium {
namespace {

struct RunState {
  RunPlan plan;
  StoreActor store;
  caf::actor llm_gateway, dispatcher;
  caf::typed_response_promise<std::string> done;
  std::set<caf::actor_addr> running;
  int generated = 0, reused = 0, evaluated = 0, correct = 0, agents = 0;
  int searches_failed = 0;
  int total_samples = 0;
  std::chrono::steady_clock::time_point started, last_line;
  static inline const char* name = "run";
};

using Self = caf::stateful_actor<RunState>*;

void print_progress(Self self, bool final_line) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - st.started).count();
  char line[256];
  std::snprintf(line, sizeof line,
                "[run %lld] agents %d | generated %d/%d (%d reused) | evaluated %d | correct %d | "
                "%llds",
                static_cast<long long>(st.plan.run_id), st.agents, st.generated, st.total_samples,
                st.reused, st.evaluated, st.correct, static_cast<long long>(secs));
  if (st.plan.live_progress) {
    std::fprintf(stderr, "\r\033[K%s%s", line, final_line ? "\n" : "");
  } else if (final_line || now - st.last_line >= std::chrono::seconds(10)) {
    std::fprintf(stderr, "%s\n", line);
    st.last_line = now;
  }
  std::fflush(stderr);
}

void maybe_finish(Self self) {
  auto& st = self->state;
  if (!st.running.empty()) return;
  print_progress(self, true);
  std::string status = st.searches_failed ? "incomplete" : "finished";
  self->request(st.store, caf::infinite, finish_atom::value, st.plan.run_id, status)
      .then([=](bool) { self->state.done.deliver(status); self->quit(); },
            [=](caf::error& e) {
              self->state.done.deliver(std::string("failed: ") + to_string(e));
              self->quit();
            });
}

caf::behavior run_actor(Self self, RunPlan plan, StoreActor store, caf::actor llm_gateway,
                        caf::actor dispatcher) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.store = store;
  st.llm_gateway = llm_gateway;
  st.dispatcher = dispatcher;
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    st.running.erase(dm.source);
    if (dm.reason) st.searches_failed++;
    maybe_finish(self);
  });
  return {
      [=](start_atom) -> caf::result<std::string> {
        auto& st = self->state;
        st.done = self->make_response_promise<std::string>();
        st.started = st.last_line = std::chrono::steady_clock::now();
        for (auto& spec : st.plan.searches) {
          st.total_samples += spec.budget;
          auto a = spawn_workload_search(self->system(), spec,
                                         SearchPeers{st.store, st.llm_gateway, st.dispatcher,
                                                     caf::actor_cast<caf::actor>(self)});
          self->monitor(a);
          st.running.insert(a.address());
        }
        self->delayed_send(self, std::chrono::seconds(1), beat_atom::value);
        maybe_finish(self);  // an empty plan ends at once
        return st.done;
      },
      [=](progress_atom, const ProgressEvent& ev) {
        auto& st = self->state;
        switch (ev.kind) {
          case ProgressEvent::generated:
            st.generated++;
            if (ev.reused) st.reused++;
            break;
          case ProgressEvent::evaluated:
            st.evaluated++;
            if (ev.correct) st.correct++;
            break;
          case ProgressEvent::workload_done:
          case ProgressEvent::workload_failed:
            break;
        }
      },
      [=](beat_atom) {
        self->request(self->state.dispatcher, caf::infinite, agents_atom::value)
            .then([=](int32_t n) {
              self->state.agents = n;
              if (!self->state.running.empty()) print_progress(self, false);
            });
        self->delayed_send(self, std::chrono::seconds(1), beat_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_run(caf::actor_system& sys, RunPlan plan, StoreActor store, caf::actor llm_gateway,
                     caf::actor dispatcher) {
  return sys.spawn(run_actor, std::move(plan), std::move(store), std::move(llm_gateway),
                   std::move(dispatcher));
}

}  // namespace palladium
