#include "actors/zmq_bridge.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq_addon.hpp>

namespace palladium {

ZmqBridge::ZmqBridge(const std::string& endpoint) : ctx_(1), router_(ctx_, zmq::socket_type::router) {
  router_.set(zmq::sockopt::router_mandatory, 1);
  router_.set(zmq::sockopt::linger, 0);
  // An agent whose old TCP connection is still half-open after a network drop
  // reconnects under the same routing id; without handover the ROUTER would
  // refuse the new connection until the old one times out.
  router_.set(zmq::sockopt::router_handover, 1);
  try {
    router_.bind(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot listen on " + endpoint + ": " + e.what());
  }
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

ZmqBridge::~ZmqBridge() {
  stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ZmqBridge::start(InboundFn on_inbound) {
  on_inbound_ = std::move(on_inbound);
  thread_ = std::thread([this] { loop(); });
}

void ZmqBridge::send(std::string peer, std::string payload) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    was_empty = outbox_.empty();
    outbox_.emplace_back(std::move(peer), std::move(payload));
  }
  // One wake-up per batch: the loop drains the whole outbox each time.
  if (was_empty) wake();
}

void ZmqBridge::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
}

void ZmqBridge::stop() {
  // Both the dispatcher's exit handler and the owner may stop the bridge, from
  // different threads; a second concurrent join() would throw.
  std::lock_guard<std::mutex> guard(stop_mutex_);
  if (!thread_.joinable()) return;
  stopping_ = true;
  wake();
  thread_.join();
}

void ZmqBridge::loop() {
  std::vector<zmq::pollitem_t> items{{router_.handle(), 0, ZMQ_POLLIN, 0},
                                     {nullptr, wake_fd_, ZMQ_POLLIN, 0}};
  std::deque<std::pair<std::string, std::string>> batch;
  std::vector<zmq::message_t> parts;
  while (!stopping_) {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t n;
      [[maybe_unused]] auto r = read(wake_fd_, &n, sizeof n);
      {
        std::lock_guard<std::mutex> guard(mutex_);
        batch.swap(outbox_);
      }
      for (auto& [peer, payload] : batch) {
        try {
          std::array<zmq::const_buffer, 2> frames{zmq::buffer(peer), zmq::buffer(payload)};
          zmq::send_multipart(router_, frames, zmq::send_flags::dontwait);
        } catch (const zmq::error_t& e) {
          spdlog::warn("dropping frame to agent {}: {}", peer, e.what());
        }
      }
      batch.clear();
    }
    if (items[0].revents & ZMQ_POLLIN) {
      while (true) {
        parts.clear();
        std::optional<size_t> got;
        try {
          got = zmq::recv_multipart(router_, std::back_inserter(parts), zmq::recv_flags::dontwait);
        } catch (const zmq::error_t& e) {
          spdlog::warn("receive failed: {}", e.what());
          break;
        }
        if (!got) break;
        if (parts.size() != 2) {
          spdlog::warn("dropping a {}-part message (expected [peer][payload])", parts.size());
          continue;
        }
        on_inbound_(parts[0].to_string(), parts[1].to_string());
      }
    }
  }
}

}  // namespace palladium
