// How long an actor waits for a peer's answer before it gives up: the request then fails with
// CAF's request_timeout, which errc_of() (actors/errors.hpp) reads as Errc::deadline_exceeded,
// a retryable code, so a stuck peer ends the waiting search or run as a failure its rerun
// resumes instead of hanging the coordinator.
//
// The values come from the run config's coordinator.timeouts section
// (config/coordinator_config.hpp); these defaults are the config's defaults.
#pragma once

#include <chrono>

namespace palladium {

struct RequestTimeouts {
  // A store read or write: group commit answers within one batch, so only a wedged disk
  // or database lock takes minutes.
  std::chrono::milliseconds store{std::chrono::minutes(2)};
  // An LLM sample through the gateway, queueing behind the rate limits and retries included.
  std::chrono::milliseconds llm{std::chrono::hours(1)};
  // A whole run, from start_atom to its final status (a sweep waits this long for a cell).
  std::chrono::milliseconds run{std::chrono::hours(24 * 7)};
  // A status poll (stats, quarantines) for the progress line: a late answer is skipped.
  std::chrono::milliseconds status{std::chrono::seconds(5)};
};

}  // namespace palladium
