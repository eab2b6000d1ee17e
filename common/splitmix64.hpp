// SplitMix64: a seeded, portable 64-bit generator (Steele, Lea & Flood 2014).
//
// Every random choice in Palladium draws from one of these (the search's
// decisions through search/rng.hpp, the replay and synthetic providers'
// shuffles), so that the same seed gives the same run on every platform.
//
// Never seeded from std::random_device or the clock. Not thread-safe; cheap to
// copy.

#ifndef PALLADIUM_COMMON_SPLITMIX64_HPP_
#define PALLADIUM_COMMON_SPLITMIX64_HPP_

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

}  // namespace palladium

#endif  // PALLADIUM_COMMON_SPLITMIX64_HPP_
