// CAF glue for protocol/errc.hpp: Palladium's error codes as caf::error values.
//
//   caf::error e = make_error(Errc::unavailable, "openai: HTTP 503");
//   if (auto code = errc_of(e); code && retryable(*code)) { ...retry... }
//
// A caf::error made here has category "palladium", the Errc as its code and the message as
// its context, so the code (and with it the retry decision) survives every actor boundary;
// errc_of() of a CAF system error (caf::sec) maps the ones with clear retry semantics
// (request_timeout -> deadline_exceeded) and returns nullopt for the rest.
// register_error_category() makes to_string(error) print "palladium:<code>: <message>"; call
// it on every actor_system_config.
#pragma once

#include <optional>
#include <string>

#include <caf/all.hpp>

#include "protocol/errc.hpp"

namespace palladium {

caf::error make_error(Errc code, std::string message);

std::optional<Errc> errc_of(const caf::error& error);

// The message given to make_error(), or to_string(error) for errors from elsewhere.
std::string error_message(const caf::error& error);

void register_error_category(caf::actor_system_config& config);

}  // namespace palladium
