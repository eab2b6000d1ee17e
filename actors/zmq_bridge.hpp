// ZmqBridge: the one thread that owns the coordinator's ROUTER socket.
//
// A zmq socket must be used by exactly one thread, while CAF actors hop between
// scheduler threads, so no actor touches the socket. Inbound frames are handed
// to a callback on the bridge thread (the dispatcher wires it to anon_send);
// outbound frames are queued by send(), which any thread may call, and an
// eventfd wakes the bridge thread to flush them.
//
// Failure: bind errors throw from the constructor with the endpoint named.
// Sending to a peer that has gone away is logged and dropped (router_mandatory
// turns the silent drop into an error we can see).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <zmq.hpp>

namespace palladium {

class ZmqBridge {
 public:
  using InboundFn = std::function<void(std::string peer, std::string payload)>;

  // Binds the ROUTER to `endpoint` (tcp://HOST:0 picks a free port).
  explicit ZmqBridge(const std::string& endpoint);
  ~ZmqBridge();
  ZmqBridge(const ZmqBridge&) = delete;
  ZmqBridge& operator=(const ZmqBridge&) = delete;

  // The endpoint actually bound, with the port resolved.
  const std::string& endpoint() const { return endpoint_; }

  // Starts the I/O thread; `on_inbound` runs on it for every well-formed
  // two-frame message [peer][payload]. Other shapes are logged and dropped.
  void start(InboundFn on_inbound);
  // Thread-safe; returns immediately.
  void send(std::string peer, std::string payload);
  // Stops and joins the I/O thread; idempotent and thread-safe.
  void stop();

 private:
  void loop();
  void wake();

  zmq::context_t ctx_;
  zmq::socket_t router_;
  std::string endpoint_;
  int wake_fd_ = -1;
  InboundFn on_inbound_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::mutex mutex_;
  std::deque<std::pair<std::string, std::string>> outbox_;  // guarded by mutex_
};

}  // namespace palladium
