// Batch mode for some calls only: a CallRunner that sends each call to the batch runner or
// the online one by what the call is (llm.batch_roles, llm.online_methods). A call whose
// answer the next call waits on (the iterative method's chain) gains nothing from a job that
// may take hours; a beam's fan-out or a sweep's independent first rounds lose nothing.
//
// Both runners must speak for the same provider and model (the response cache keys on them);
// provider(), model(), max_samples_per_call() and params_json() are the online runner's.
// A batch answer's usage says batch = true, so it is priced at the batch rate and an online
// one at the online rate (llm/price_table.hpp).

#ifndef PALLADIUM_LLM_SPLIT_RUNNER_HPP_
#define PALLADIUM_LLM_SPLIT_RUNNER_HPP_

#include <functional>
#include <memory>

#include "llm/call_runner.hpp"

namespace palladium {

// Throws std::invalid_argument when the two runners name different providers or models.
std::unique_ptr<CallRunner> make_split_runner(std::unique_ptr<CallRunner> online,
                                              std::unique_ptr<CallRunner> batch,
                                              std::function<bool(const ChatRequest&)> goes_batch);

}  // namespace palladium

#endif  // PALLADIUM_LLM_SPLIT_RUNNER_HPP_
