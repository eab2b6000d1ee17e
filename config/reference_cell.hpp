// The reference cell of a sweep: one extra run, on the sweep's own agents, that times the
// hand-tuned reference kernels of the sweep's priority workloads (those with a reference in
// workloads/catalog.json) for Table 3. Its key marks it in the store; reports read it apart
// from the grid's cells.
#pragma once

#include <string>

#include "config/sweep_config.hpp"

namespace palladium {

inline constexpr const char* kReferenceCellKey = "reference=hand_tuned";
inline constexpr const char* kReferenceCellParams = R"({"reference":"hand_tuned"})";

// The reference cell's run config text (one sample per workload from the hand_tuned provider,
// seed 0, the base's evaluation section), or "" when no cell has a priority workload.
std::string reference_cell_config(const SweepConfig& sweep);

}  // namespace palladium
