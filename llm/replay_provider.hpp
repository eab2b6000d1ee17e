// The offline provider: serves recorded responses from a corpus directory.
//
// Layout: <corpus_dir>/<workload_id>/*.md, one recorded LLM response per
// file. The files of a workload are sorted by file name (byte order) into
// files[0..n). For a request,
//
//   response = files[perm[sample_index % n]]
//
// where perm is a Fisher-Yates shuffle of 0..n-1 (for i = n-1 down to 1:
// j = next() % (i + 1), swap perm[i], perm[j]) driven by splitmix64 seeded
// with fnv1a64(workload_id) ^ seed. This is portable (no std:: random
// distributions) and deterministic, and serves each file exactly once per n
// consecutive samples; different seeds give different orders.
//
// Token counts are estimates (ceil(chars / 4), tokens_estimated = true) and
// the model is "replay". A workload directory is read on first use and
// cached for the provider's lifetime.
//
// Errors: a missing workload directory, or one with no *.md file, throws
// ProviderError (not retryable) naming the path. Not thread-safe.

#ifndef PALLADIUM_LLM_REPLAY_PROVIDER_HPP_
#define PALLADIUM_LLM_REPLAY_PROVIDER_HPP_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "llm/provider.hpp"

namespace palladium {

// Does not touch the file system until the first complete().
std::unique_ptr<Provider> make_replay_provider(
    std::filesystem::path corpus_dir);

// The replay order for a workload of n files: perm[k] is the file index
// served for sample_index k (mod n). Exposed for tests and for tools that
// want to predict which recorded response a sample gets.
std::vector<size_t> replay_permutation(std::string_view workload_id,
                                       uint64_t seed, size_t n);

}  // namespace palladium

#endif  // PALLADIUM_LLM_REPLAY_PROVIDER_HPP_
