// What `palladium sweep` derives from a sweep config before and as its actors start: every
// cell's run (with the reference cell, config/reference_cell.hpp), one LLM backend per distinct
// llm section (cells with equal sections share a gateway and so its limits), the sweep's rows
// in the store, and the sweep actor's plan.
//
// prepare_sweep() checks every cell, and the files it names, before the database is touched:
// a ConfigError names the sweep file and the cell.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/sweep_actor.hpp"
#include "config/sweep_config.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/run_setup.hpp"

namespace palladium {

struct CellSetup {
  std::string key, params_json;
  int ordinal = 0;
  RunConfig config;
  std::vector<WorkloadSearchSpec> searches;
  std::string llm;  // the cell's llm section as text: its gateway's key
};

struct PreparedSweep {
  SweepConfig sweep;
  std::vector<CellSetup> cells;                // the reference cell first, if any
  std::map<std::string, LlmBackend> backends;  // by CellSetup::llm
};

// `concurrency` > 0 and `local_agents` >= 0 override the sweep's. Throws ConfigError.
PreparedSweep prepare_sweep(const std::string& path, int concurrency, int local_agents,
                            const std::filesystem::path& home);

// Begins (or resumes, for the same sweep config) the sweep and puts its cells; returns the
// sweep id and each cell's id, in PreparedSweep::cells order. Throws StoreError.
int64_t record_sweep(RunStore& store, const PreparedSweep& sweep, std::vector<int64_t>& cell_ids);

// Starts the store actor and one gateway per backend; returns them by llm section.
std::map<std::string, LlmGatewayActor> start_sweep_services(Coordinator& coordinator,
                                                            std::shared_ptr<RunStore> store,
                                                            const PreparedSweep& sweep);

// The sweep actor's plan (the cells' searches are moved out of `sweep`), and in `sample_cap`
// the most samples its cells may spend.
SweepPlan sweep_plan(PreparedSweep& sweep, const std::vector<int64_t>& cell_ids,
                     const std::map<std::string, LlmGatewayActor>& gateways, int64_t& sample_cap);

}  // namespace palladium
