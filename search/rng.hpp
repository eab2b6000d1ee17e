// SplitMix64: the search's only source of randomness.
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

namespace palladium {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  // The next 64 random bits (Steele, Lea & Flood 2014; the constants of
  // Java's SplittableRandom).
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

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
