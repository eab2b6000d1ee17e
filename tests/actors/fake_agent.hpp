// A test DEALER socket playing an agent (or an attacker) against the coordinator's ROUTER:
// it speaks the wire protocol frame by frame, as the test drives it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <zmq.hpp>

#include "protocol/curve_keys.hpp"
#include "protocol/wire_protocol.hpp"

namespace palladium::testing {

using namespace std::chrono_literals;

// What an agent makes of a frame from the coordinator: its message, or nullopt for a malformed
// frame or a heartbeat (whose interval, when it names one, goes to `interval_ms`).
inline std::optional<wire::Message> read_frame(std::string_view bytes, int& interval_ms) {
  auto d = wire::decode(bytes);
  if (!d.ok()) return std::nullopt;
  if (auto* beat = std::get_if<wire::Heartbeat>(&*d.message)) {
    if (beat->interval_ms > 0) interval_ms = beat->interval_ms;
    return std::nullopt;
  }
  return d.message;
}

// The message if it is a job.
inline std::optional<wire::Job> as_job(const std::optional<wire::Message>& m) {
  if (!m || !std::holds_alternative<wire::Job>(*m)) return std::nullopt;
  return std::get<wire::Job>(*m);
}

class FakeAgent {
 public:
  // Plaintext when `server_key` is empty; else a CURVE client with `pair`.
  FakeAgent(zmq::context_t& ctx, const std::string& endpoint, const std::string& id,
            const std::string& server_key = "", const keys::KeyPair& pair = {})
      : sock_(ctx, zmq::socket_type::dealer), id_(id) {
    sock_.set(zmq::sockopt::routing_id, id);
    sock_.set(zmq::sockopt::linger, 0);
    if (!server_key.empty()) {
      sock_.set(zmq::sockopt::curve_serverkey, server_key);
      sock_.set(zmq::sockopt::curve_publickey, pair.public_key);
      sock_.set(zmq::sockopt::curve_secretkey, pair.secret_key);
    }
    sock_.connect(endpoint);
  }
  void send(const wire::Message& m) { send_raw(wire::encode(m)); }
  void send_raw(const std::string& bytes) { sock_.send(zmq::buffer(bytes), zmq::send_flags::none); }
  static wire::Hello hello_frame(const std::string& id, int slots,
                                 const std::string& backend = "interpret") {
    wire::Hello h;
    h.agent_id = id;
    h.backend = backend;
    h.device_kind = backend == "tpu" ? "TPU v6 lite" : "cpu";
    h.jax_version = "0.10.2";
    h.libtpu_version = "0.0.42.1";
    h.slots = slots;
    h.stages = {"extract", "lint", "import", "trace", "lower", "structure", "numerics", "timing"};
    return h;
  }
  void hello(int slots, const std::string& backend = "interpret") {
    send(hello_frame(id_, slots, backend));
  }
  // Next message that is not a heartbeat, or nullopt after `timeout`.
  std::optional<wire::Message> next(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 20ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t msg;
      (void)sock_.recv(msg);
      if (auto m = read_frame(msg.to_string_view(), interval_ms)) return m;
    }
    return std::nullopt;
  }
  std::optional<wire::Job> next_job(std::chrono::milliseconds timeout) {
    return as_job(next(timeout));
  }
  void heartbeat() { send(wire::Heartbeat{id_}); }
  int interval_ms = 0;

 private:
  zmq::socket_t sock_;
  std::string id_;
};

}  // namespace palladium::testing
