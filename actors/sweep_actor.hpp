// sweep actor: runs the cells of a sweep, at most `concurrency` at a time,
// in plan order, over one store, one dispatcher (so one set of agents) and
// the LLM gateways the plan names.
//
// For each cell it asks the store to begin (or resume) the cell's run,
// spawns a run actor (actors/run_actor.hpp) over the cell's searches, and
// starts the next cell when one ends. Everything a cell does is stored as it
// happens, so a sweep killed at any moment and started again resumes every
// cell where it stood: finished cells are found finished (their searches
// find every sample and evaluation stored and pay for nothing), and the
// others continue.
//
// Messages:
//   (start_atom)        -> SweepOutcome, once every cell has ended
//   (running_runs_atom) -> std::vector<int64_t>: the runs of the cells now running
// A cell whose run cannot be begun (a store error) ends as "failed" with the
// error as its reason; the others go on. Each cell's run actor gets the
// cell's own RunPlan (budget, global policy, pipelining from its config).
// The sweep actor quits once it has answered start_atom, as its run and
// search actors do when they end, so Coordinator::shutdown() has only the
// shared services left to stop.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/messages.hpp"
#include "actors/run_actor.hpp"
#include "actors/store_actor.hpp"

namespace palladium {

struct SweepCellPlan {
  int64_t cell_id = 0;
  std::string key;          // for progress lines
  std::string run_name;
  std::string config_text;  // the cell's run config: the run's identity
  RunPlan run;              // budgets, policy, pipelining and searches; run_id is filled in here
  LlmGatewayActor llm_gateway;
};

struct SweepPlan {
  std::vector<SweepCellPlan> cells;  // in run order
  int concurrency = 1;
};

SweepActor spawn_sweep(caf::actor_system& sys, SweepPlan plan, StoreActor store,
                       EvalDispatcherActor dispatcher);

}  // namespace palladium

