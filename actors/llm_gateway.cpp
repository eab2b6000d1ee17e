#include "actors/llm_gateway.hpp"

#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"

namespace palladium {
namespace {

using call_done_atom = caf::atom_constant<caf::atom("llm_done")>;
using tick_atom = caf::atom_constant<caf::atom("llm_tick")>;
using TimePoint = std::chrono::steady_clock::time_point;

struct GatewayState {
  std::shared_ptr<CallRunner> runner;
  std::function<TimePoint()> clock;
  std::unique_ptr<CallScheduler> scheduler;
  std::map<uint64_t, caf::response_promise> waiting;  // ticket -> its requester
  std::optional<TimePoint> timer_at;                  // the earliest tick already asked for
  static inline const char* name = "llm_gateway";
};

using Self = caf::stateful_actor<GatewayState>*;

ChatResponse to_response(const CallScheduler::Delivery& d) {
  ChatResponse r;
  r.text = d.completion.text;
  r.model = d.call.model;
  r.prompt_tokens = static_cast<int>(d.usage.prompt_tokens);
  r.completion_tokens = static_cast<int>(d.usage.completion_tokens);
  r.thinking_tokens = static_cast<int>(d.usage.thinking_tokens);
  r.tokens_estimated = d.call.usage.estimated;
  r.latency_ms = d.call.latency_ms;
  r.finish_reason = d.completion.finish_reason;
  r.truncated = d.completion.truncated;
  r.cost_usd = d.cost_usd;
  // A second request for a sample already asked shares that answer and pays nothing.
  r.cached = !d.paid;
  return r;
}

void apply(Self self, CallScheduler::Step step);

void arm_timer(Self self) {
  auto& st = self->state;
  auto wake = st.scheduler->next_wakeup();
  if (!wake) return;
  if (st.timer_at && *st.timer_at <= *wake) return;  // an earlier tick will poll anyway
  st.timer_at = *wake;
  const auto now = st.clock();
  auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - now) +
               std::chrono::milliseconds(1);
  if (delay < std::chrono::milliseconds(0)) delay = std::chrono::milliseconds(0);
  self->delayed_send(self, delay, tick_atom::value);
}

void poll(Self self) { apply(self, self->state.scheduler->poll(self->state.clock())); }

void apply(Self self, CallScheduler::Step step) {
  auto& st = self->state;
  for (auto& d : step.deliver) {
    auto it = st.waiting.find(d.ticket);
    if (it == st.waiting.end()) continue;
    it->second.deliver(to_response(d));
    st.waiting.erase(it);
  }
  for (auto& f : step.fail) {
    auto it = st.waiting.find(f.ticket);
    if (it == st.waiting.end()) continue;
    it->second.deliver(make_error(f.error.code(), f.error.what()));
    st.waiting.erase(it);
  }
  for (auto& s : step.start) {
    // The runner's completion may run on the transport's thread: it only sends a message.
    caf::actor me = caf::actor_cast<caf::actor>(self);
    const uint64_t id = s.call_id;
    st.runner->start(s.call, [me, id](CallOutcome outcome) {
      caf::anon_send(me, call_done_atom::value, id, std::move(outcome));
    });
  }
  arm_timer(self);
}

caf::behavior llm_gateway(Self self, std::shared_ptr<CallRunner> runner,
                          LlmGatewayOptions options) {
  auto& st = self->state;
  st.runner = std::move(runner);
  st.clock = options.clock;
  SchedulerOptions so = std::move(options.scheduler);
  if (so.provider.empty() || so.provider == "llm") so.provider = st.runner->provider();
  so.max_samples_per_call =
      std::max(1, std::min(so.max_samples_per_call, st.runner->max_samples_per_call()));
  st.scheduler = std::make_unique<CallScheduler>(std::move(so), st.clock());
  return {
      [=](generate_atom, const ChatRequest& req) -> caf::result<ChatResponse> {
        auto& st = self->state;
        auto promise = self->make_response_promise<ChatResponse>();
        const uint64_t ticket = st.scheduler->submit(req, st.clock());
        st.waiting.emplace(ticket, promise);
        poll(self);
        return promise;
      },
      [=](call_done_atom, uint64_t call_id, CallOutcome& outcome) {
        auto& st = self->state;
        if (outcome.error)
          spdlog::warn("{}: call failed: {}", st.runner->provider(), outcome.error->what());
        apply(self, st.scheduler->finish(call_id, outcome, st.clock()));
        poll(self);
      },
      [=](tick_atom) {
        auto& st = self->state;
        if (st.timer_at && st.clock() >= *st.timer_at) st.timer_at.reset();
        poll(self);
      },
      [=](stats_atom) {
        auto& st = self->state;
        LlmGatewayStats s;
        s.calls = st.scheduler->stats();
        s.spent_usd = st.scheduler->spend().realised();
        s.committed_usd = st.scheduler->spend().committed();
        s.stopped = st.scheduler->stopped().value_or("");
        return s;
      },
  };
}

}  // namespace

caf::actor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<CallRunner> runner,
                             LlmGatewayOptions options) {
  return sys.spawn<caf::detached>(llm_gateway, std::move(runner), std::move(options));
}

caf::actor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<Provider> provider) {
  return spawn_llm_gateway(sys, std::shared_ptr<CallRunner>(make_local_runner(std::move(provider))));
}

}  // namespace palladium
