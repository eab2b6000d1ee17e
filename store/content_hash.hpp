// Content addresses: SHA-256 (OpenSSL libcrypto) as 64 lowercase hex digits.
//
// The run store names every text it keeps by sha256_hex(text) (the blobs
// table), so identical prompts, responses and code are stored once, and a
// hash means the same text in every database and on every machine.
//
// All functions are pure and thread-safe; they never fail.

#ifndef PALLADIUM_STORE_CONTENT_HASH_HPP_
#define PALLADIUM_STORE_CONTENT_HASH_HPP_

#include <string>
#include <string_view>

namespace palladium {

// SHA-256 of the bytes of `text`, e.g. sha256_hex("") ==
// "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".
std::string sha256_hex(std::string_view text);

// The identity of a prompt: sha256_hex(sha256_hex(system) + sha256_hex(user)).
// Hashing the two parts first keeps the pair unambiguous ("ab" + "c" and
// "a" + "bc" differ) and lets anyone recompute it from the two blobs.
std::string prompt_hash(std::string_view system_prompt,
                        std::string_view user_prompt);

}  // namespace palladium

#endif  // PALLADIUM_STORE_CONTENT_HASH_HPP_
