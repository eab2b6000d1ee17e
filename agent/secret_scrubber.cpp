#include "agent/secret_scrubber.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

extern char** environ;

namespace palladium::agent {

bool secret_variable_name(const std::string& name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH",
                           "PRIVATE", "SESSION", "COOKIE"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

SecretScrubber SecretScrubber::from_environment(char** environment) {
  char** env = environment ? environment : environ;
  std::set<std::string> listed;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    if (entry.rfind("PALLADIUM_SECRET_ENV=", 0) != 0) continue;
    std::stringstream names(entry.substr(entry.find('=') + 1));
    for (std::string name; std::getline(names, name, ',');) {
      if (!name.empty()) listed.insert(name);
    }
  }
  SecretScrubber scrubber;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (secret_variable_name(name) || listed.count(name)) scrubber.add(entry.substr(eq + 1));
  }
  return scrubber;
}

void SecretScrubber::add(const std::string& value) {
  if (value.size() < kMinSecretLength) return;
  if (std::find(secrets_.begin(), secrets_.end(), value) != secrets_.end()) return;
  secrets_.push_back(value);
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string SecretScrubber::scrub(const std::string& text) const {
  std::string out = text;
  for (const std::string& secret : secrets_) {
    std::size_t at = 0;
    while ((at = out.find(secret, at)) != std::string::npos) {
      out.replace(at, secret.size(), kReplacement);
      at += std::char_traits<char>::length(kReplacement);
    }
  }
  return out;
}

}  // namespace palladium::agent
