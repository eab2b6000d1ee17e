// One evaluation as `palladium eval` prints it: every field of the evaluation record as JSON, or
// the verdict, numerics, timing (a cpu-wall time said not to be a TPU time), the speedup with
// its band, the stages' times and the candidate's error and output as text.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/evaluation.hpp"

namespace palladium {

// Enums by their spelling, absent values as null; "speedup" by the rule a run stores.
nlohmann::json evaluation_json(const Evaluated& result, const std::string& workload);

void print_evaluation(std::ostream& out, const Evaluated& result, const std::string& workload);

}  // namespace palladium
