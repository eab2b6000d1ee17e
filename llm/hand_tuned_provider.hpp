// The hand-tuned reference "provider": answers a code request for workload W
// with W's hand-tuned Pallas reference (workloads/hand_tuned/ref_W.py) in a
// ```python fence, as a model would answer.
//
// It exists so that a sweep times the references through exactly the path
// its candidates take (store, dispatcher, the same agents and judges, the
// same timing kind), which is what Table 3's "% of hand-tuned" divides by. It
// is not a model: reports label its results "hand-tuned reference".
//
// Tokens are estimated (llm/token_estimate.hpp) and the model is
// "hand_tuned". Errors: a workload without a reference file throws
// ProviderError (not retryable) naming the path. Not thread-safe.

#ifndef PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_
#define PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_

#include <filesystem>
#include <memory>

#include "llm/provider.hpp"

namespace palladium {

// `dir` is workloads/hand_tuned under PALLADIUM_HOME. Touches no file until used.
std::unique_ptr<Provider> make_hand_tuned_provider(std::filesystem::path dir);

// The reference module of `workload_id` under `dir`.
std::filesystem::path hand_tuned_path(const std::filesystem::path& dir,
                                      const std::string& workload_id);

}  // namespace palladium

#endif  // PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_
