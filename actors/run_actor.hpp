// run actor: one run of a config, from first prompt to the stored report.
//
// On (start_atom) it spawns one workload_search actor per workload x seed,
// counts their progress, prints a live progress line, and replies with the
// run's final status once every search has ended: "finished" when all spent
// their budgets, "incomplete" when any failed (their stored work is kept and a
// rerun of the same config resumes them). It marks the status in the store
// before replying.
#pragma once

#include <cstdint>
#include <vector>

#include <caf/all.hpp>

#include "actors/workload_search_actor.hpp"

namespace palladium {

struct RunPlan {
  int64_t run_id = 0;
  std::vector<WorkloadSearchSpec> searches;
  bool live_progress = true;  // rewrite one terminal line instead of printing lines
};

caf::actor spawn_run(caf::actor_system& sys, RunPlan plan, StoreActor store, caf::actor llm_gateway,
                     caf::actor dispatcher);

}  // namespace palladium
