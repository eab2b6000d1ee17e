// splitmix64 (Steele, Lea, Flood 2014): a tiny, full-period generator
// specified bit for bit, unlike std::mt19937 + std::uniform_*_distribution,
// whose outputs differ between standard libraries. The offline providers use
// it so their answers are the same on every machine.

#ifndef PALLADIUM_LLM_SPLITMIX64_HPP_
#define PALLADIUM_LLM_SPLITMIX64_HPP_

#include <cstdint>

namespace palladium {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n); n > 0. The modulo bias is below 2^-40 for the n used here.
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

}  // namespace palladium

#endif  // PALLADIUM_LLM_SPLITMIX64_HPP_
