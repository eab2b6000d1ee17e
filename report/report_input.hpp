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
// A cell's method, model label and suite are those the store keeps with it
// (store/run_identity.hpp), never re-read from its YAML; its suite is never
// the workloads that happen to have candidates, and an empty one is a
// ConfigError, so a report never silently shrinks its suite.
//
// Errors: StoreError from the store, ConfigError for a stored config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/reference_cell.hpp"
#include "store/run_store.hpp"
#include "report/sweep_report.hpp"

namespace palladium {

// `sweep_id`: the sweep to report; nullopt: the latest sweep if the database
// has one, else every run.
SweepReportInput collect_report_input(const RunStore& store, std::optional<int64_t> sweep_id,
                                      const InputSensitivity& sensitivity);

// A run's or cell's suite as the store keeps it (RunRecord::suite, read once from its config:
// store/run_identity.hpp). Throws ConfigError naming `origin` when it is empty: without it the
// suite metrics would silently count only the workloads that have candidates.
std::vector<std::string> stored_suite(const std::vector<std::string>& suite,
                                      const std::string& origin);

}  // namespace palladium
