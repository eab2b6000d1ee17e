// Fills a SweepReportInput (report/sweep_report.hpp) from a run database: the
// one place report, policy-eval and status read what a sweep recorded.
//
// With a sweep: its cells in ordinal order, each with its latest run (none:
// the cell has not started), that run's live candidates and evaluations and
// its LLM usage; the reference cell (params {"reference": "hand_tuned"}, made
// by `palladium sweep` to time the hand-tuned references on the same agents)
// fills `hand_tuned` instead of being a cell. Without one (a database of
// plain runs): every run is a cell of its own, keyed "run-<id>".
//
// A cell's suite is its stored config's workload list (stored_workloads),
// never the workloads that happen to have candidates; an unreadable one is a
// ConfigError, so a report never silently shrinks its suite.
//
// Errors: StoreError from the store, ConfigError for a stored config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/run_store.hpp"
#include "report/sweep_report.hpp"

namespace palladium {

// The params_json of the reference cell a sweep adds.
inline constexpr const char* kReferenceCellKey = "reference=hand_tuned";

// `sweep_id`: the sweep to report; nullopt: the latest sweep if the database
// has one, else every run.
SweepReportInput collect_report_input(const RunStore& store, std::optional<int64_t> sweep_id,
                                      const InputSensitivity& sensitivity);

// The label reports give a config's model: "replay", "synthetic",
// "hand_tuned", or llm.model for an API provider.
std::string model_label(const std::string& config_text);

}  // namespace palladium
