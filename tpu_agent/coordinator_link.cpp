#include "tpu_agent/coordinator_link.hpp"

#include <algorithm>
#include <utility>

#include <zmq_addon.hpp>

#include "tpu_agent/agent_log.hpp"

namespace palladium::agent {

namespace {

using std::chrono::milliseconds;

long ms_between(CoordinatorLink::Clock::time_point a, CoordinatorLink::Clock::time_point b) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(b - a).count());
}

}  // namespace

CoordinatorLink::CoordinatorLink(Options options) : opt_(std::move(options)) {
  backoff_ms_ = opt_.heartbeat_ms;
}

CoordinatorLink::~CoordinatorLink() = default;

void CoordinatorLink::start(wire::Hello hello, Clock::time_point now) {
  hello_ = std::move(hello);
  backoff_ms_ = opt_.heartbeat_ms;
  connect(now);
}

void CoordinatorLink::connect(Clock::time_point now) {
  socket_.emplace(ctx_, zmq::socket_type::dealer);
  socket_->set(zmq::sockopt::routing_id, opt_.agent_id);
  socket_->set(zmq::sockopt::linger, 0);
  socket_->connect(opt_.endpoint);
  last_heard_ = now;
  next_heartbeat_ = now + milliseconds(opt_.heartbeat_ms);
  send(hello_);
  agent_log()->info("connecting to {} as {} ({} slots, backend {})", opt_.endpoint,
                    opt_.agent_id, hello_.slots, hello_.backend);
  while (!unsent_.empty()) {
    send(unsent_.front());
    unsent_.pop_front();
  }
}

std::optional<zmq::pollitem_t> CoordinatorLink::poll_item() {
  if (!socket_) return std::nullopt;
  return zmq::pollitem_t{socket_->handle(), 0, ZMQ_POLLIN, 0};
}

std::vector<wire::Message> CoordinatorLink::receive(Clock::time_point now) {
  std::vector<wire::Message> out;
  std::vector<zmq::message_t> parts;
  while (socket_ &&
         zmq::recv_multipart(*socket_, std::back_inserter(parts), zmq::recv_flags::dontwait)) {
    last_heard_ = now;
    backoff_ms_ = opt_.heartbeat_ms;
    if (parts.size() != 1) {
      agent_log()->warn("dropping a {}-part message from the coordinator (want 1 part)",
                        parts.size());
    } else {
      std::string bytes = parts[0].to_string();
      wire::DecodeResult d = wire::decode(bytes);
      if (d.ok()) {
        out.push_back(std::move(*d.message));
      } else {
        agent_log()->warn("dropping malformed frame from the coordinator ({} bytes): {}",
                          bytes.size(), d.error);
      }
    }
    parts.clear();
  }
  return out;
}

void CoordinatorLink::send(const wire::Message& m) {
  if (!socket_) {
    if (auto* r = std::get_if<wire::Result>(&m)) unsent_.push_back(*r);
    return;
  }
  std::string bytes = wire::encode(m);
  try {
    if (!socket_->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
      agent_log()->warn("send queue full; dropped a {} frame", wire::type_name(m));
    }
  } catch (const zmq::error_t& e) {
    agent_log()->warn("send of a {} frame failed: {}", wire::type_name(m), e.what());
  }
}

void CoordinatorLink::on_timers(Clock::time_point now) {
  if (socket_ && now >= next_heartbeat_) {
    send(wire::Heartbeat{opt_.agent_id});
    next_heartbeat_ = now + milliseconds(opt_.heartbeat_ms);
  }
  if (socket_ &&
      ms_between(last_heard_, now) > static_cast<long>(opt_.heartbeat_ms) * opt_.liveness) {
    agent_log()->warn("coordinator silent for {} ms; reconnecting in {} ms",
                      ms_between(last_heard_, now), backoff_ms_);
    socket_.reset();
    reconnect_at_ = now + milliseconds(backoff_ms_);
    backoff_ms_ = std::min<long>(backoff_ms_ * 2, opt_.reconnect_max_ms);
  }
  if (!socket_ && now >= reconnect_at_) connect(now);
}

CoordinatorLink::Clock::time_point CoordinatorLink::next_wakeup(Clock::time_point now) const {
  Clock::time_point t = now + milliseconds(1000);
  if (socket_) {
    t = std::min(t, next_heartbeat_);
    t = std::min(t, last_heard_ + milliseconds(static_cast<long>(opt_.heartbeat_ms) *
                                                   opt_.liveness +
                                               1));
  } else {
    t = std::min(t, reconnect_at_);
  }
  return t;
}

void CoordinatorLink::close(const std::string& reason) {
  if (!socket_) return;
  // Give the bye a moment to leave: close() honours the linger.
  socket_->set(zmq::sockopt::linger, 1000);
  send(wire::Bye{opt_.agent_id, reason});
  socket_.reset();
}

}  // namespace palladium::agent
