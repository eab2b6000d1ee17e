#include "agent/coordinator_link.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

#include <zmq_addon.hpp>

#include "agent/agent_log.hpp"

namespace palladium::agent {

namespace {

using std::chrono::milliseconds;

long ms_between(CoordinatorLink::Clock::time_point a, CoordinatorLink::Clock::time_point b) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(b - a).count());
}

// 16 random bytes as hex: a routing id nobody can guess, fresh for every connection.
std::string random_routing_id() {
  unsigned char bytes[16];
  bool ok = false;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ok = ::read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
    ::close(fd);
  }
  if (!ok) {
    std::random_device rd;
    for (auto& b : bytes) b = static_cast<unsigned char>(rd());
  }
  std::string out;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

}  // namespace

CoordinatorLink::CoordinatorLink(Options options) : opt_(std::move(options)) {
  own_ctx_.emplace(1);
  ctx_ = &*own_ctx_;
  backoff_ms_ = opt_.heartbeat_ms;
  interval_ms_ = opt_.heartbeat_ms;
}

CoordinatorLink::CoordinatorLink(Options options, zmq::context_t& context)
    : opt_(std::move(options)), ctx_(&context) {
  backoff_ms_ = opt_.heartbeat_ms;
  interval_ms_ = opt_.heartbeat_ms;
}

CoordinatorLink::~CoordinatorLink() = default;

void CoordinatorLink::start(wire::Hello hello, Clock::time_point now) {
  hello_ = std::move(hello);
  backoff_ms_ = opt_.heartbeat_ms;
  connect(now);
}

void CoordinatorLink::connect(Clock::time_point now) {
  socket_.emplace(*ctx_, zmq::socket_type::dealer);
  socket_->set(zmq::sockopt::routing_id, random_routing_id());
  socket_->set(zmq::sockopt::linger, 0);
  socket_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(opt_.max_message_bytes));
  if (!opt_.server_key.empty()) {
    socket_->set(zmq::sockopt::curve_serverkey, opt_.server_key);
    socket_->set(zmq::sockopt::curve_publickey, opt_.public_key);
    socket_->set(zmq::sockopt::curve_secretkey, opt_.secret_key);
  }
  socket_->connect(opt_.endpoint);
  last_heard_ = now;
  reconnect_asap_ = false;
  send(hello_);
  agent_log()->info("connecting to {} as {} ({} slots, backend {}, {})", opt_.endpoint,
                    opt_.agent_id, hello_.slots, hello_.backend,
                    opt_.server_key.empty() ? "plaintext" : "CURVE");
  std::deque<wire::Result> kept;
  kept.swap(unsent_);
  for (const auto& r : kept) send(r);
  last_sent_ = now;
}

void CoordinatorLink::drop_connection(Clock::time_point now, const std::string& why) {
  agent_log()->warn("{}; reconnecting in {} ms", why, backoff_ms_);
  socket_.reset();
  reconnect_at_ = now + milliseconds(backoff_ms_);
  backoff_ms_ = std::min<long>(backoff_ms_ * 2, opt_.reconnect_max_ms);
}

std::optional<zmq::pollitem_t> CoordinatorLink::poll_item() {
  if (!socket_) return std::nullopt;
  return zmq::pollitem_t{socket_->handle(), 0, ZMQ_POLLIN, 0};
}

std::vector<wire::Message> CoordinatorLink::receive(Clock::time_point now) {
  std::vector<wire::Message> out;
  std::vector<zmq::message_t> parts;
  while (socket_ && !reconnect_asap_ &&
         zmq::recv_multipart(*socket_, std::back_inserter(parts), zmq::recv_flags::dontwait)) {
    last_heard_ = now;
    if (parts.size() != 1) {
      agent_log()->warn("dropping a {}-part message from the coordinator (want 1 part)",
                        parts.size());
      parts.clear();
      continue;
    }
    std::string bytes = parts[0].to_string();
    parts.clear();
    wire::DecodeResult d = wire::decode(bytes);
    if (!d.ok()) {
      agent_log()->warn("dropping malformed frame from the coordinator ({} bytes): {}",
                        bytes.size(), d.error);
      continue;
    }
    if (auto* bye = std::get_if<wire::Bye>(&*d.message)) {
      // Refused or forgotten: keep backing off while it goes on.
      agent_log()->warn("coordinator said bye: {}", bye->reason);
      reconnect_asap_ = true;
    } else {
      backoff_ms_ = opt_.heartbeat_ms;
      if (auto* beat = std::get_if<wire::Heartbeat>(&*d.message); beat && beat->interval_ms > 0)
        interval_ms_ = beat->interval_ms;
    }
    out.push_back(std::move(*d.message));
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
      if (auto* r = std::get_if<wire::Result>(&m)) unsent_.push_back(*r);
    }
  } catch (const zmq::error_t& e) {
    agent_log()->warn("send of a {} frame failed: {}", wire::type_name(m), e.what());
    if (auto* r = std::get_if<wire::Result>(&m)) unsent_.push_back(*r);
  }
  last_sent_ = Clock::now();
}

void CoordinatorLink::on_timers(Clock::time_point now) {
  if (socket_ && reconnect_asap_) {
    drop_connection(now, "the coordinator closed the session");
  }
  if (socket_ && ms_between(last_sent_, now) >= interval_ms_) {
    send(wire::Heartbeat{opt_.agent_id});
    last_sent_ = now;
  }
  if (socket_ && ms_between(last_heard_, now) > interval_ms_ * opt_.liveness) {
    drop_connection(now, "coordinator silent for " + std::to_string(ms_between(last_heard_, now)) +
                             " ms");
  }
  if (!socket_ && now >= reconnect_at_) connect(now);
}

CoordinatorLink::Clock::time_point CoordinatorLink::next_wakeup(Clock::time_point now) const {
  Clock::time_point t = now + milliseconds(1000);
  if (socket_) {
    if (reconnect_asap_) return now;
    t = std::min(t, last_sent_ + milliseconds(interval_ms_));
    t = std::min(t, last_heard_ + milliseconds(interval_ms_ * opt_.liveness + 1));
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
