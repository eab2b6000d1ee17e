#include "actors/sweep_actor.hpp"

#include <cstdio>
#include <map>

#include "actors/messages.hpp"
#include "actors/run_actor.hpp"

namespace palladium {

bool SweepOutcome::all_finished() const {
  for (const auto& [key, status] : cells)
    if (status != "finished") return false;
  return true;
}

namespace {

struct SweepState {
  SweepPlan plan;
  StoreActor store;
  EvalDispatcherActor dispatcher;
  caf::typed_response_promise<SweepOutcome> done;
  size_t next = 0;                      // the next cell of the plan to start
  std::map<size_t, int64_t> running;    // plan index -> run id
  std::map<size_t, std::string> ended;  // plan index -> status
  static inline const char* name = "sweep";
};

using Self = SweepActor::stateful_pointer<SweepState>;

void line(Self self, const std::string& what) {
  auto& st = self->state;
  std::fprintf(stderr, "[sweep] %zu/%zu cells ended, %zu running | %s\n", st.ended.size(),
               st.plan.cells.size(), st.running.size(), what.c_str());
  std::fflush(stderr);
}

void fill(Self self);

void cell_ended(Self self, size_t i, const std::string& status) {
  auto& st = self->state;
  st.running.erase(i);
  st.ended[i] = status;
  line(self, "cell " + st.plan.cells[i].key + ": " + status);
  fill(self);
}

void start_cell(Self self, size_t i) {
  auto& cell = self->state.plan.cells[i];
  self->request(self->state.store, cell.run.timeouts.store, begin_run_atom::value, cell.run_name,
                cell.config_text, cell.cell_id)
      .then(
          [=](int64_t run_id) {
            auto& st = self->state;
            auto& c = st.plan.cells[i];
            st.running[i] = run_id;
            line(self, "cell " + c.key + " -> run " + std::to_string(run_id));
            RunPlan plan = c.run;
            plan.run_id = run_id;
            for (auto& s : plan.searches) s.run_id = run_id;
            plan.live_progress = false;  // several cells print; one line each
            auto run = spawn_run(self->system(), std::move(plan), st.store, c.llm_gateway,
                                 st.dispatcher);
            self->request(run, c.run.timeouts.run, start_atom::value)
                .then([=](std::string& status) { cell_ended(self, i, status); },
                      [=](caf::error& e) { cell_ended(self, i, "failed: " + to_string(e)); });
          },
          [=](caf::error& e) {
            self->state.running.erase(i);
            self->state.ended[i] = "failed: cannot begin the run: " + to_string(e);
            line(self, "cell " + self->state.plan.cells[i].key + ": " + self->state.ended[i]);
            fill(self);
          });
  // Counted as running until its run is known, so the limit holds.
  self->state.running.emplace(i, 0);
}

void fill(Self self) {
  auto& st = self->state;
  while (st.running.size() < static_cast<size_t>(std::max(1, st.plan.concurrency)) &&
         st.next < st.plan.cells.size())
    start_cell(self, st.next++);
  if (st.ended.size() == st.plan.cells.size() && st.done.pending()) {
    SweepOutcome out;
    for (size_t i = 0; i < st.plan.cells.size(); ++i)
      out.cells.emplace_back(st.plan.cells[i].key, st.ended[i]);
    st.done.deliver(std::move(out));
    self->quit();
  }
}

SweepActor::behavior_type sweep_actor(Self self, SweepPlan plan, StoreActor store,
                                      EvalDispatcherActor dispatcher) {
  self->state.plan = std::move(plan);
  self->state.store = std::move(store);
  self->state.dispatcher = std::move(dispatcher);
  return {
      [=](start_atom) -> caf::result<SweepOutcome> {
        self->state.done = self->make_response_promise<SweepOutcome>();
        line(self, "starting " + std::to_string(self->state.plan.cells.size()) + " cells, " +
                       std::to_string(self->state.plan.concurrency) + " at a time");
        fill(self);
        return self->state.done;
      },
      [=](running_runs_atom) {
        std::vector<int64_t> ids;
        for (const auto& [i, run_id] : self->state.running)
          if (run_id != 0) ids.push_back(run_id);
        return ids;
      },
  };
}

}  // namespace

SweepActor spawn_sweep(caf::actor_system& sys, SweepPlan plan, StoreActor store,
                       EvalDispatcherActor dispatcher) {
  return sys.spawn(sweep_actor, std::move(plan), std::move(store), std::move(dispatcher));
}

}  // namespace palladium
