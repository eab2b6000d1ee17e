// What `palladium status` shows of a sweep (or a run), from the database and, while the
// coordinator is alive, its live status file (coordinator/status_file.hpp): each cell's progress
// against its sample budget, tokens and dollars, the best kernel so far per workload, the
// agents, their utilisation, the dispatch queue and the LLM calls in flight.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "coordinator/status_file.hpp"
#include "report/sweep_report.hpp"

namespace palladium {

// The status as JSON (`palladium status --json`); `live` is the coordinator's file, if alive.
nlohmann::ordered_json status_json(const std::string& db, const SweepReportInput& in,
                                   const std::optional<CoordinatorStatus>& live);

// The same as text; cpu-wall speedups are said to be CPU ratios, not TPU speedups.
std::string status_text(const nlohmann::ordered_json& status);

}  // namespace palladium
