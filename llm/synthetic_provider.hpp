// The Provider for `llm.provider: synthetic`: a thin adapter over
// SyntheticModel (llm/synthetic_model.hpp). Responses are labelled model
// "synthetic" and their token counts are marked estimated, so no report can
// present them as an LLM's.
//
// Errors: complete() throws ProviderError (not retryable) when a kernel
// family's files are broken. Not thread-safe; the gateway serialises calls.

#ifndef PALLADIUM_LLM_SYNTHETIC_PROVIDER_HPP_
#define PALLADIUM_LLM_SYNTHETIC_PROVIDER_HPP_

#include <filesystem>
#include <memory>

#include "llm/provider.hpp"

namespace palladium {

// `synthetic_dir` is llm/synthetic/ (templates/ and families/). Touches no
// file until the first complete().
std::unique_ptr<Provider> make_synthetic_provider(std::filesystem::path synthetic_dir);

}  // namespace palladium

#endif  // PALLADIUM_LLM_SYNTHETIC_PROVIDER_HPP_
