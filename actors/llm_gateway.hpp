// llm_gateway actor: the one place LLM calls leave the coordinator.
//
// It owns the provider, retries errors the provider marks retryable (with
// exponential backoff), and reports token counts and latency with each
// response so the store can account for every call. It runs detached (its
// own thread) because providers block on network I/O.
//
// Reply to (generate_atom, ChatRequest): ChatResponse, or an error naming the
// provider's failure after the retries are spent.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "llm/provider.hpp"

namespace palladium {

caf::actor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<Provider> provider,
                             int max_attempts = 4);

}  // namespace palladium
