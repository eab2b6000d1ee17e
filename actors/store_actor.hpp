// store actor: the only writer of the run database.
//
// SQLite allows one writer at a time, and every write must be durable before
// the sender moves on (a reply from this actor means the row is committed), so
// all writes funnel through this one actor. It runs detached because SQLite
// calls block on disk I/O. See actors/messages.hpp for the messages.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "store/run_store.hpp"

namespace palladium {

caf::actor spawn_store(caf::actor_system& sys, std::shared_ptr<RunStore> store);

}  // namespace palladium
