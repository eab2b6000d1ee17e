// 64-bit FNV-1a: a small, portable, non-cryptographic hash.
//
// Used where Palladium needs a hash that is identical on every platform and
// every run: seeding the replay provider's shuffle and the synthetic model's
// draws, naming batch requests. It is not collision-resistant against an
// adversary; nothing here needs that (the store's content addresses are
// SHA-256, store/content_hash.hpp).

#ifndef PALLADIUM_COMMON_FNV1A_HPP_
#define PALLADIUM_COMMON_FNV1A_HPP_

#include <cstdint>
#include <string>
#include <string_view>

namespace palladium {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ULL;

// FNV-1a over the bytes of `data`.
constexpr uint64_t fnv1a64(std::string_view data) {
  uint64_t h = kFnv1aOffsetBasis;
  for (char c : data) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnv1aPrime;
  }
  return h;
}

// fnv1a64(data) as 16 lowercase hex digits, zero-padded.
inline std::string fnv1a64_hex(std::string_view data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  uint64_t h = fnv1a64(data);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kDigits[h & 0xf];
    h >>= 4;
  }
  return out;
}

}  // namespace palladium

#endif  // PALLADIUM_COMMON_FNV1A_HPP_
