// Error codes for failures that cross an actor, process or network boundary.
//
// A code says what the caller may do next, in the spirit of abseil's status codes, so that the
// LLM gateway, the dispatcher and the agents retry by code, never by parsing message text:
//
//   retryable(code) == true   the same call may succeed later unchanged (a 429, a 5xx, a lost
//                             agent, a timeout): retry with backoff, and never charge the
//                             candidate or the budget for the failure;
//   retryable(code) == false  the call cannot succeed until something is fixed (a bad key, a bad
//                             config, a malformed response): fail at once and name the cause.
//
// The enum is plain C++ so that the agent, which has no actor system, can use it too; CAF glue
// (make_error, the renderer) lives in actors/errors.hpp. Values are stable: they appear in logs
// and may be stored. 0 is reserved for "no error" (CAF's convention).

#ifndef PALLADIUM_PROTOCOL_ERRC_HPP_
#define PALLADIUM_PROTOCOL_ERRC_HPP_

#include <cstdint>
#include <optional>
#include <string_view>

namespace palladium {

enum class Errc : uint8_t {
  // Retryable.
  unavailable = 1,         // the peer or service is down or overloaded (5xx, lost agent)
  deadline_exceeded = 2,   // no answer in time
  resource_exhausted = 3,  // a rate limit or quota (429); honour any retry-after
  aborted = 4,             // a conflict or an interrupted transaction; retry at a higher level
  // Not retryable: fix something first.
  invalid_argument = 10,   // bad input: a config, a request, a frame
  not_found = 11,          // a named thing does not exist (workload, corpus, run)
  already_exists = 12,
  permission_denied = 13,  // authenticated but not allowed (403)
  unauthenticated = 14,    // missing or wrong credentials (401, an unknown CURVE key)
  failed_precondition = 15,  // the system is not in a state where this can work
  out_of_range = 16,       // a budget or a cap would be exceeded
  unimplemented = 17,
  internal = 18,           // a broken invariant: a bug
  data_loss = 19,          // stored data is unreadable or corrupt
  cancelled = 20,          // the caller gave up (shutdown, SIGTERM)
};

// True for the codes a caller should retry (see above).
constexpr bool retryable(Errc code) {
  return code == Errc::unavailable || code == Errc::deadline_exceeded ||
         code == Errc::resource_exhausted || code == Errc::aborted;
}

// The spelling used in logs and messages, e.g. "deadline_exceeded". "unknown" for other values.
std::string_view to_string(Errc code);

// The inverse of to_string(); nullopt for unknown text.
std::optional<Errc> errc_from_string(std::string_view text);

}  // namespace palladium

#endif  // PALLADIUM_PROTOCOL_ERRC_HPP_
