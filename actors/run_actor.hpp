// run actor: one run of a config, from first prompt to the stored report.
//
// On (start_atom) it spawns one workload_search actor per workload x seed,
// counts their progress, prints a live progress line, and replies with the
// run's final status once every search has ended: "finished" when all spent
// their budgets, "incomplete" when any failed (their stored work is kept and a
// rerun of the same config resumes them). It marks the status in the store
// before replying.
//
// Budget. Without global reallocation each search owns a closed budget of
// budget_per_workload units. With it (RunPlan::global), the run holds a
// GlobalAllocator (search/global_allocator.hpp): searches start with open
// budgets, report their SearchStatus when idle or done, and whenever every
// live search is idle or done the run computes new limits and sends them
// (an epoch); the allocator is a pure function of those statuses, so a
// resumed run makes the same grants.
//
// Pipelining. Every second it asks the dispatcher how many agents are
// connected and gives each live search an in-flight cap of
// ceil(in_flight_per_slot x agents x slots_per_agent / live searches), at
// least 1: the fleet's queue stays fed without many stale samples.
#pragma once

#include <cstdint>
#include <vector>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/request_timeouts.hpp"
#include "actors/workload_search_actor.hpp"
#include "search/global_allocator.hpp"

namespace palladium {

struct RunPlan {
  int64_t run_id = 0;
  std::vector<WorkloadSearchSpec> searches;
  bool live_progress = true;  // rewrite one terminal line instead of printing lines
  int budget_per_search = 1;  // each spec's budget when not global
  bool global = false;        // global reallocation across the searches
  GlobalAllocatorConfig global_config;
  int in_flight_per_slot = 2;
  int slots_per_agent = 1;
  RequestTimeouts timeouts;  // the run's waits, and each search's (spec.timeouts is replaced)
};

RunActor spawn_run(caf::actor_system& sys, RunPlan plan, StoreActor store,
                   LlmGatewayActor llm_gateway, EvalDispatcherActor dispatcher);

}  // namespace palladium
