// CURVE key pairs for the authenticated coordinator <-> agent link (ZeroMQ's CurveZMQ).
//
// Keys are handled in ZeroMQ's Z85 text form (40 characters for 32 bytes). Key files use the
// certificate format of czmq and pyzmq (`zmq.auth.load_certificate` reads them), so tools
// outside the project can use the same files:
//
//   NAME.key          the public certificate: `public-key = "<z85>"`; mode 0644, shareable
//   NAME.key_secret   the secret certificate: public-key and `secret-key = "<z85>"`; mode 0600
//
// An allowlist is a path: a directory whose *.key files each hold one public key, or a file
// with one key per line (a bare Z85 key or a `public-key = "..."` line; '#' starts a comment).
//
// Failure: functions that read or write files throw KeyError naming the path and the problem
// (missing, unreadable, malformed, or a secret file that others may read). Thread safety: all
// functions are safe to call from any thread.

#ifndef PALLADIUM_PROTOCOL_CURVE_KEYS_HPP_
#define PALLADIUM_PROTOCOL_CURVE_KEYS_HPP_

#include <set>
#include <stdexcept>
#include <string>

namespace palladium::keys {

class KeyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters; empty for a public-only certificate
};

// A fresh key pair from libsodium. Throws KeyError if libzmq was built without CURVE.
KeyPair generate();

// True for a well-formed Z85 key (40 characters of the Z85 alphabet).
bool is_z85_key(const std::string& text);

// The public key that belongs to `secret_key` (Z85). Throws KeyError on a malformed key.
std::string public_of(const std::string& secret_key);

// Writes DIR/NAME.key (0644) and DIR/NAME.key_secret (0600), creating DIR (0700) if needed.
// Refuses (KeyError) to overwrite existing files. Returns the secret file's path.
std::string write_pair(const std::string& dir, const std::string& name, const KeyPair& pair);

// Reads a certificate. With `need_secret`, the file must hold a secret key and must not be
// readable by group or others (like ssh's private keys). The public key of a secret file is
// checked against its secret key.
KeyPair read_certificate(const std::string& path, bool need_secret);

// A public key given as Z85 text or as the path of a certificate file.
std::string public_key_from(const std::string& text_or_path);

// Every public key in an allowlist (see above). Throws KeyError if the path does not exist or
// a line or file is malformed.
std::set<std::string> read_allowlist(const std::string& path);

}  // namespace palladium::keys

#endif  // PALLADIUM_PROTOCOL_CURVE_KEYS_HPP_
