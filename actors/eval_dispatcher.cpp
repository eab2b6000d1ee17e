#include "actors/eval_dispatcher.hpp"

#include <map>

#include <spdlog/spdlog.h>

#include "actors/messages.hpp"

namespace palladium {
namespace {

struct DispatcherState {
  std::shared_ptr<ZmqBridge> bridge;
  std::unique_ptr<JobLedger> ledger;
  std::chrono::milliseconds heartbeat{500};
  std::map<int64_t, caf::typed_response_promise<wire::Result>> waiting;
  static inline const char* name = "eval_dispatcher";
};

using Self = caf::stateful_actor<DispatcherState>*;

void pump(Self self) {
  auto& st = self->state;
  for (auto& [peer, job] : st.ledger->assign(JobLedger::Clock::now())) {
    spdlog::debug("job {} ({}) -> {}", job.job_id, job.workload_id, peer);
    st.bridge->send(peer, wire::encode(job));
  }
}

void deliver(Self self, wire::Result result) {
  auto it = self->state.waiting.find(result.job_id);
  if (it == self->state.waiting.end()) return;
  it->second.deliver(std::move(result));
  self->state.waiting.erase(it);
}

void on_frame(Self self, const ZmqInbound& in) {
  auto& st = self->state;
  auto now = JobLedger::Clock::now();
  auto decoded = wire::decode(in.payload);
  if (!decoded.ok()) {
    spdlog::warn("dropping malformed frame from {}: {}", in.peer, decoded.error);
    return;
  }
  st.ledger->on_seen(in.peer, now);
  std::visit(
      [&](auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, wire::Hello>) {
          spdlog::info("agent {} joined: backend {}, device {}, jax {}, {} slot(s)", in.peer,
                       msg.backend, msg.device_kind, msg.jax_version, msg.slots);
          st.ledger->on_hello(in.peer, msg, now);
        } else if constexpr (std::is_same_v<T, wire::Result>) {
          switch (st.ledger->on_result(in.peer, msg)) {
            case JobLedger::ResultDisposition::accepted:
              deliver(self, std::move(msg));
              break;
            case JobLedger::ResultDisposition::duplicate:
              spdlog::info("dropping duplicate result for job {} from {}", msg.job_id, in.peer);
              break;
            case JobLedger::ResultDisposition::unknown_job:
              spdlog::warn("dropping result for unknown job {} from {}", msg.job_id, in.peer);
              break;
          }
        } else if constexpr (std::is_same_v<T, wire::Bye>) {
          spdlog::info("agent {} left: {}", in.peer, msg.reason);
          st.ledger->on_bye(in.peer);
        } else if constexpr (std::is_same_v<T, wire::Heartbeat>) {
          // on_seen above is all a heartbeat means.
        } else {
          spdlog::warn("dropping unexpected '{}' frame from agent {}", wire::type_name(msg), in.peer);
        }
      },
      *decoded.message);
  pump(self);
}

void on_beat(Self self) {
  auto& st = self->state;
  auto beat = wire::encode(wire::Heartbeat{"coordinator"});
  for (const auto& peer : st.ledger->agent_ids()) st.bridge->send(peer, beat);
  auto sweep = st.ledger->sweep(JobLedger::Clock::now());
  for (auto& r : sweep.abandoned) deliver(self, std::move(r));
  pump(self);
}

caf::behavior eval_dispatcher(Self self, std::shared_ptr<ZmqBridge> bridge,
                              JobLedger::Options options) {
  auto& st = self->state;
  st.bridge = bridge;
  st.heartbeat = options.heartbeat;
  st.ledger = std::make_unique<JobLedger>(options);
  self->attach_functor([bridge](const caf::error&) { bridge->stop(); });
  self->delayed_send(self, st.heartbeat, beat_atom::value);
  return {
      [=](eval_atom, wire::Job job) -> caf::result<wire::Result> {
        auto rp = self->make_response_promise<wire::Result>();
        self->state.waiting.emplace(job.job_id, rp);
        self->state.ledger->submit(std::move(job));
        pump(self);
        return rp;
      },
      [=](const ZmqInbound& in) { on_frame(self, in); },
      [=](beat_atom) {
        on_beat(self);
        self->delayed_send(self, self->state.heartbeat, beat_atom::value);
      },
      [=](agents_atom) { return static_cast<int32_t>(self->state.ledger->agent_count()); },
  };
}

}  // namespace

caf::actor spawn_eval_dispatcher(caf::actor_system& sys, std::shared_ptr<ZmqBridge> bridge,
                                 JobLedger::Options options) {
  auto dispatcher = sys.spawn(eval_dispatcher, bridge, options);
  bridge->start([dispatcher](std::string peer, std::string payload) {
    caf::anon_send(dispatcher, ZmqInbound{std::move(peer), std::move(payload)});
  });
  return dispatcher;
}

}  // namespace palladium
