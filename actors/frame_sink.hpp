// FrameSink: where the eval_dispatcher's frames to agents go, and what it asks of the link.
//
// In production the sink is the ZmqBridge (bridge_sink below), whose I/O thread also hands the
// agents' frames to the dispatcher as ZmqInboundBatch messages. The dispatcher knows only this
// interface, so a test can record what it sends and inject the agents' frames as messages,
// with no socket, no thread and no sleep (tests/actors/recording_sink.hpp).
//
// The dispatcher calls a sink from its own actor only; a sink need not be thread-safe unless
// something else shares it (the bridge is).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/zmq_bridge.hpp"

namespace palladium {

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void send(std::string peer, std::string payload) = 0;
  virtual void send_many(std::vector<std::pair<std::string, std::string>> frames) = 0;
  virtual void send_many(std::vector<OutboundFrame> frames) = 0;
  // True on a CURVE link: a peer's identity is then its public key (AgentFacts::agent_key).
  virtual bool authenticated() const = 0;
  // The link's batch window (actors/zmq_bridge.hpp, Batching); the dispatcher sets it from
  // the fleet's typical evaluation.
  virtual std::chrono::microseconds batch_window() const = 0;
  virtual void set_batch_window(std::chrono::microseconds window) = 0;
  // The dispatcher has terminated: no more frames.
  virtual void stop() = 0;
};

// The production sink: every call goes to `bridge`.
std::shared_ptr<FrameSink> bridge_sink(std::shared_ptr<ZmqBridge> bridge);

}  // namespace palladium
