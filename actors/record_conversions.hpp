// Conversions between what crosses the wire, what the store keeps and what the
// search algorithm sees. Kept in one place so a field added to one of them is
// threaded through all three here, not in the actors.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/wire_protocol.hpp"
#include "llm/provider.hpp"
#include "search/eval_outcome.hpp"
#include "store/run_store.hpp"

namespace palladium {

// A verdict string this build does not know becomes `crash`, with the
// original named in the error text, so a newer agent cannot corrupt the store.
EvaluationRecord record_from_result(int64_t candidate_id, const wire::Result& result);

EvalOutcome outcome_from_record(const EvaluationRecord& record);

}  // namespace palladium
