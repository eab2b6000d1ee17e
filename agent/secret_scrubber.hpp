// Removes secret values from text before it leaves the agent: a candidate's error text, its
// captured output and its error signature are stored and put into the next prompt.
//
// The secrets are values, not names: SecretScrubber::from_environment() takes the value of every
// variable of the agent's environment whose name looks like a credential (it contains KEY,
// TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH, PRIVATE, SESSION or COOKIE) or is listed in
// PALLADIUM_SECRET_ENV (comma-separated names), plus anything add()ed (a key file's contents).
// Values shorter than kMinSecretLength are ignored: "1" or "true" would blank out half a
// traceback and protect nothing. Each occurrence becomes "[secret]".
//
// Thread safety: a const SecretScrubber may be used from any thread.

#ifndef PALLADIUM_AGENT_SECRET_SCRUBBER_HPP_
#define PALLADIUM_AGENT_SECRET_SCRUBBER_HPP_

#include <cstddef>
#include <string>
#include <vector>

namespace palladium::agent {

class SecretScrubber {
 public:
  static constexpr std::size_t kMinSecretLength = 6;
  static constexpr const char* kReplacement = "[secret]";

  // The secrets of `environ` (the process environment when null).
  static SecretScrubber from_environment(char** environment = nullptr);

  // Adds one secret value (ignored when shorter than kMinSecretLength or already known).
  void add(const std::string& value);

  // `text` with every occurrence of every secret replaced (longest secrets first, so a secret
  // that contains another is removed whole).
  std::string scrub(const std::string& text) const;

  std::size_t size() const { return secrets_.size(); }

 private:
  std::vector<std::string> secrets_;  // sorted by length, longest first
};

// True when an environment variable named `name` holds a credential by its name alone.
bool secret_variable_name(const std::string& name);

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_SECRET_SCRUBBER_HPP_
