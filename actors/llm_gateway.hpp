// llm_gateway actor: the one place LLM calls leave the coordinator.
//
// A thin shell over llm/call_scheduler.hpp (the policy: concurrency cap, token buckets,
// coalescing, retries honouring Retry-After, immediate failure on 400/401/403, the dollar
// cap) and an llm/call_runner.hpp (the provider call). It never blocks on the network: a
// remote runner's HTTP runs on the transport's I/O thread (llm/curl_transport.hpp), whose
// completion comes back to this actor as a message, so many calls are in flight at once.
// Offline runners (replay, synthetic, hand_tuned) answer inline; the actor is detached so
// their file reads block only its own thread.
//
// Contract:
//   (generate_atom, ChatRequest) -> ChatResponse, or a caf::error made by
//       actors/errors.hpp make_error() with the call's Errc (retryable bit intact: 429/5xx
//       exhausted -> unavailable/resource_exhausted, 400 -> invalid_argument, 401 ->
//       unauthenticated, 403 -> permission_denied, timeout -> deadline_exceeded, the dollar
//       cap -> out_of_range) and a message naming the provider and the HTTP status. A failure
//       is never turned into a response; a truncated answer (finish_reason length) is a
//       response with truncated = true.
//   (stats_atom) -> LlmGatewayStats
//
// The record (when spawned with a store): the llm_responses table is the cache and the
// record of the experiment. Before a request is queued, its key (provider, model asked for,
// prompt hash, canonical sampling parameters, sample index, seed) is looked up; a stored
// answer is delivered with cached = true and its response_id, and costs nothing. Every call
// the gateway makes is appended to llm_calls (failed ones too, with their Errc), and every
// answer it receives is stored in llm_responses before it is delivered, with response_id
// set, so a coordinator killed at any moment never pays twice for an answer it handed out.
// With use_cache = false (--no-cache) nothing is looked up and the answers are stored under
// keys scoped to the request's run ("cache_scope" in the parameters), so later runs still
// find the old answers and this run finds its own on resume.
// If the store fails, the answer is delivered with response_id 0 and the error is logged.
//
// Time: the scheduler reads `clock` (injected; steady_clock by default) and the actor
// wakes itself with delayed messages for rate limits, backoff and the coalescing window.

#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/messages.hpp"
#include "actors/request_timeouts.hpp"
#include "actors/store_actor.hpp"
#include "llm/call_runner.hpp"
#include "llm/call_scheduler.hpp"
#include "llm/provider.hpp"

namespace palladium {

struct LlmGatewayOptions {
  // Caps, limits, retries, the dollar cap and the price function. scheduler.provider is
  // filled from the runner when empty; max_samples_per_call is bounded by the runner's.
  SchedulerOptions scheduler;
  std::function<std::chrono::steady_clock::time_point()> clock = [] {
    return std::chrono::steady_clock::now();
  };
  bool use_cache = true;  // false: --no-cache
  // What a call's prompt-cache hits saved against the uncached price (llm_calls
  // cache_saved_usd); unset: no price, stored as NULL.
  std::function<double(const Usage&)> cache_saved;
  RequestTimeouts timeouts;  // its waits on the store (`store`)
  // On its own thread, so an offline runner's file reads block only the gateway. false: on
  // the scheduler like the other actors (a test on the deterministic fixture, whose runner
  // never blocks).
  bool detached = true;
};

// Spawns the gateway over `runner`. Thread-safe to call; the actor owns the runner.
// `store` may be null: nothing is looked up or recorded (tests of the policy alone).
LlmGatewayActor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<CallRunner> runner,
                                  LlmGatewayOptions options = {}, StoreActor store = {});

// An offline provider behind a local runner, with default options.
LlmGatewayActor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<Provider> provider);

}  // namespace palladium

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(palladium::CallOutcome)
