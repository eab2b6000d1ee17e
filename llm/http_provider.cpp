#include "llm/http_provider.hpp"

namespace palladium {

// Out of line so the vtable has one home.
HttpProvider::~HttpProvider() = default;

int64_t request_seed(uint64_t search_seed, int first_sample) {
  // splitmix64 of the pair: nearby seeds and sample indices give unrelated seeds.
  uint64_t z = search_seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(first_sample) +
               0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<int64_t>(z & 0x7FFFFFFFULL);
}

}  // namespace palladium
