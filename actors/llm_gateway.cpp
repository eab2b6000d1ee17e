#include "actors/llm_gateway.hpp"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"

namespace palladium {
namespace {

caf::behavior llm_gateway(caf::event_based_actor*, std::shared_ptr<Provider> provider,
                          int max_attempts) {
  return {
      [=](generate_atom, const ChatRequest& req) -> caf::result<ChatResponse> {
        auto delay = std::chrono::milliseconds(500);
        for (int attempt = 1;; ++attempt) {
          try {
            return provider->complete(req);
          } catch (const ProviderError& e) {
            if (!e.retryable() || attempt >= max_attempts) {
              return make_error(e.retryable() ? Errc::unavailable : Errc::failed_precondition,
                                provider->name() + ": " + e.what() + " (attempt " +
                                    std::to_string(attempt) + ")");
            }
            spdlog::warn("{} failed ({}); retrying in {} ms", provider->name(), e.what(),
                         delay.count());
            // Detached actor: sleeping blocks only this gateway's own thread.
            std::this_thread::sleep_for(delay);
            delay *= 2;
          }
        }
      },
  };
}

}  // namespace

caf::actor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<Provider> provider,
                             int max_attempts) {
  return sys.spawn<caf::detached>(llm_gateway, std::move(provider), max_attempts);
}

}  // namespace palladium
