// The hand-tuned reference "provider": answers a code request for workload W
// with W's hand-tuned Pallas reference (its path in workloads/catalog.json) in a
// ```python fence, as a model would answer.
//
// It exists so that a sweep times the references through exactly the path
// its candidates take (store, dispatcher, the same agents and judges, the
// same timing kind), which is what Table 3's "% of hand-tuned" divides by. It
// is not a model: reports label its results "hand-tuned reference".
//
// Tokens are estimated (llm/token_estimate.hpp) and the model is
// "hand_tuned". Errors: a workload the catalog gives no reference, or whose
// reference file is missing, throws ProviderError (not retryable). Not thread-safe.

#ifndef PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_
#define PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_

#include <filesystem>
#include <memory>

#include "llm/provider.hpp"

namespace palladium {

// `home` is PALLADIUM_HOME, which the catalog's paths are relative to. Touches no file until used.
std::unique_ptr<Provider> make_hand_tuned_provider(std::filesystem::path home);

}  // namespace palladium

#endif  // PALLADIUM_LLM_HAND_TUNED_PROVIDER_HPP_
