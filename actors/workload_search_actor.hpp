// workload_search actor: a thin, pipelined shell that drives one search
// (workload x method x seed) with any Strategy (search/strategy.hpp).
//
// It asks the strategy for the samples that are ready (propose), sends each
// to the llm_gateway, stores the answer, sends code and repair samples for
// evaluation (actors/eval_job.hpp builds the job), stores the verdict, and
// hands every answer back to the strategy (observe). Several samples are in
// flight at once where the strategy allows, so generation overlaps
// evaluation; the run bounds them with an in-flight cap derived from the
// fleet's free capacity (bounded oversubscription: enough to keep the queue
// fed, few enough that feedback is not stale).
//
// Resume. At start it loads, in one store round trip, every live sample of
// its search with its evaluation. A proposed sample whose stored prompt is
// identical is reused (no LLM call; no evaluation if one is stored); one
// whose prompt changed is asked again, and storing the new answer marks the
// old row superseded (resume identity includes the prompt). Each new
// candidate then costs two store round trips: the sample (the gateway has
// already stored its LLM call and answer; the sample points at the answer) and
// its evaluation. Everything is persisted before
// the strategy sees it, so a killed run resumes without paying twice.
//
// Budget. The strategy's Budget starts as the spec says. The run may send
// (budget_atom, limit, open) to move it (global reallocation) and
// (inflight_atom, cap) to change the in-flight cap. The actor reports its
// SearchStatus to the run with (status_atom, index, status) whenever it is
// idle (waiting for budget) or done.
//
// It quits normally when the strategy is done and with an error when the LLM
// provider, the evaluator or the store fails for good; the run actor
// monitors it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/eval_job.hpp"
#include "actors/interfaces.hpp"
#include "actors/request_timeouts.hpp"
#include "actors/store_actor.hpp"
#include "search/method_config.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct WorkloadSearchSpec {
  int64_t run_id = 0;
  int index = 0;  // this search's position in the run (status messages)
  WorkloadBrief brief;
  MethodConfig method;
  StrategyMenus menus;                  // read by methods that plan from menus
  std::string llm_provider = "replay";  // recorded with every LLM call
  uint64_t seed = 0;
  int budget = 1;             // the budget's initial limit
  bool budget_open = false;   // true under global reallocation
  EvalSettings eval;
  int in_flight = 1;          // initial in-flight cap (>= 1)
  RequestTimeouts timeouts;   // its waits on the store and the gateway
};

struct SearchPeers {
  StoreActor store;
  LlmGatewayActor llm_gateway;
  EvalDispatcherActor dispatcher;
  RunActor run;
};

WorkloadSearchActor spawn_workload_search(caf::actor_system& sys, WorkloadSearchSpec spec,
                                          SearchPeers peers);

}  // namespace palladium
