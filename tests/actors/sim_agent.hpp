// An agent (or an attacker) on the deterministic fixture: its frames reach the dispatcher as
// the ZmqInboundBatch messages the bridge would send, and it reads what the dispatcher sent it
// from a RecordingSink. The counterpart of tests/actors/fake_agent.hpp without the socket:
// reading runs the actor system first, so what the dispatcher sends in answer is there.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "actors/interfaces.hpp"
#include "protocol/wire_protocol.hpp"
#include "tests/actors/fake_agent.hpp"
#include "tests/actors/recording_sink.hpp"

namespace palladium::testing {

class SimAgent {
 public:
  // `peer` is its identity at the dispatcher (a CURVE key on an authenticated sink).
  // `run` lets the actors handle what is pending (the fixture's run()).
  SimAgent(caf::actor_system& sys, EvalDispatcherActor dispatcher, RecordingSink& sink,
           std::string peer, std::function<void()> run)
      : sys_(sys), dispatcher_(std::move(dispatcher)), sink_(sink), peer_(std::move(peer)),
        run_(std::move(run)) {}

  void send(const wire::Message& m) { send_raw(wire::encode(m)); }
  // As the bridge hands a frame over: urgent, stamped with the time it was read.
  void send_raw(const std::string& bytes) {
    ZmqInboundBatch batch;
    batch.frames.push_back(InboundFrame{peer_, InboundPayload(bytes), "10.0.0.1",
                                        sys_.clock().now()});
    caf::anon_send<caf::message_priority::high>(dispatcher_, std::move(batch));
  }
  void hello(int slots, const std::string& backend = "interpret") {
    send(FakeAgent::hello_frame(peer_, slots, backend));
  }
  void heartbeat() { send(wire::Heartbeat{peer_}); }

  // The next frame the dispatcher sent it that is not a heartbeat (a heartbeat's interval is
  // kept in interval_ms), after letting the actors run; nullopt if there is none.
  std::optional<wire::Message> next() {
    run_();
    std::string bytes;
    while (sink_.take(peer_, bytes))
      if (auto m = read_frame(bytes, interval_ms)) return m;
    return std::nullopt;
  }
  std::optional<wire::Job> next_job() { return as_job(next()); }

  const std::string& peer() const { return peer_; }
  int interval_ms = 0;

 private:
  caf::actor_system& sys_;
  EvalDispatcherActor dispatcher_;
  RecordingSink& sink_;
  std::string peer_;
  std::function<void()> run_;
};

}  // namespace palladium::testing
