// workload_search actor: runs one search (workload x method x seed) to the end
// of its sample budget.
//
// The search algorithm itself is plain C++ (search/iterative_search.hpp); this
// actor only moves its requests around: prompt -> llm_gateway -> store ->
// eval_dispatcher -> store -> back into the algorithm. Each step is persisted
// before the next one starts, and before asking the LLM or the agents it asks
// the store whether the work is already there, so a killed run resumes without
// paying for any response or evaluation twice.
//
// It quits normally when the budget is spent and with an error when the LLM
// provider or the store fails for good; the run actor monitors it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/store_actor.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct WorkloadSearchSpec {
  int64_t run_id = 0;
  WorkloadBrief brief;
  std::string method = "iterative";
  std::string llm_provider = "replay";  // recorded with every LLM call
  uint64_t seed = 0;
  int budget = 1;
  double timeout_s = 60;
  std::vector<int64_t> input_seeds{0, 1};
  bool require_pallas = true;
};

struct SearchPeers {
  StoreActor store;
  caf::actor llm_gateway;
  caf::actor dispatcher;
  caf::actor run;
};

caf::actor spawn_workload_search(caf::actor_system& sys, WorkloadSearchSpec spec, SearchPeers peers);

}  // namespace palladium
