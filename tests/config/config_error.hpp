// What the run-config tests ask of a bad config: the error parse_run_config() gives it.
#pragma once

#include <string>

#include "config/run_config.hpp"

namespace palladium::testing {

// The ConfigError's text for `yaml` (read as "test.yaml"), or "" when it parses.
inline std::string config_error_of(const std::string& yaml) {
  try {
    parse_run_config(yaml, "test.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace palladium::testing
