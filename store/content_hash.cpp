#include "store/content_hash.hpp"

#include <openssl/sha.h>

namespace palladium {

std::string sha256_hex(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * SHA256_DIGEST_LENGTH, '0');
  for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

std::string prompt_hash(std::string_view system_prompt, std::string_view user_prompt) {
  return sha256_hex(sha256_hex(system_prompt) + sha256_hex(user_prompt));
}

}  // namespace palladium
