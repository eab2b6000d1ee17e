// The search's random decisions, each from its own SplitMix64 (common/splitmix64.hpp).
//
// A strategy's random choices (which menu options survive dropout, which
// planning instruction a prompt gets) must be the same on every run with the
// same seed, and must not depend on the order in which observations arrive
// when several samples are in flight. So every choice draws from its own
// generator, derived from (search seed, stream, index) by decision_rng(),
// instead of from one generator shared across decisions.
//
// Never seeded from std::random_device or the clock. Not thread-safe; cheap to
// copy.

#ifndef PALLADIUM_SEARCH_RNG_HPP_
#define PALLADIUM_SEARCH_RNG_HPP_

#include <cstdint>

#include "common/splitmix64.hpp"

namespace palladium {

// Streams: one per kind of decision, so adding a decision of a new kind never
// shifts the draws of an existing one.
enum class RngStream : uint64_t {
  menu_dropout = 1,
  plan_instruction = 2,
};

// The generator for decision `index` (e.g. a sample index) of `stream` in the
// search seeded with `seed`.
inline SplitMix64 decision_rng(uint64_t seed, RngStream stream, uint64_t index) {
  SplitMix64 mix(seed ^ (static_cast<uint64_t>(stream) * 0xd1b54a32d192ed03ULL));
  const uint64_t base = mix.next();
  return SplitMix64(base ^ (index * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
}

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_RNG_HPP_
