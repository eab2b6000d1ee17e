// ZmqBridge: the one thread that owns the coordinator's ROUTER socket, and the link's gate.
//
// A zmq socket must be used by exactly one thread, while CAF actors hop between scheduler
// threads, so no actor touches the socket. Inbound frames are handed to a callback on the
// bridge thread (the dispatcher wires it to anon_send); outbound frames are queued by send(),
// which any thread may call, and an eventfd wakes the bridge thread to flush them.
//
// Authentication. With a server secret key the ROUTER is a CURVE server and the bridge thread
// also answers ZeroMQ's ZAP requests: a connection is accepted only if the client's public key
// is in the allowlist (the keys given to allow(), plus an allowlist file or directory, re-read
// at most once a second when an unknown key knocks, so a key added while the run goes is taken
// without a restart). A peer's identity is then its public key (Z85), and that is the `peer`
// the callback sees and send() takes; the routing id a client picks is private to the bridge
// (agents pick a random one per connection), so no peer can claim another's identity or
// receive its frames. Without a key (plaintext) the identity is the routing id, and the
// constructor refuses any endpoint other than loopback TCP unless `insecure_plaintext` says
// the user accepts an unauthenticated link.
//
// Limits: ZMQ_MAXMSGSIZE is max_message_bytes (a larger frame drops its connection). A turn
// of the loop answers at most 256 ZAP requests, reads at most 1,024 frames and sends at most
// 1,024, so neither a
// fleet's handshakes nor its frames keep the other (or the outbox) waiting; a turn longer than
// 200 ms is logged (warn) with what it did.
//
// Batching: with a batch window set (set_batch_window; the dispatcher sets one from the
// fleet's typical evaluation time), a turn that moved frames is followed by a pause until the
// window since its start has passed, so a busy fleet's frames are handed over, and sent, a
// window's worth per turn: one wake-up of the bridge, of the dispatcher's CAF worker and of
// ZeroMQ's I/O thread per batch instead of per frame. The pause adds at most one window to a
// frame's way in or out; 0 (the default) turns it off.
//
// Failure: bad options and bind errors throw std::runtime_error naming the endpoint or key.
// Sending to an identity with no connection is counted and dropped.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <zmq.hpp>

namespace palladium {

struct ZmqBridgeOptions {
  std::string endpoint;           // tcp://HOST:PORT (port 0 picks a free one)
  std::string curve_secret_key;   // Z85 server secret key; empty = plaintext
  std::string allow_path;         // allowlist file or directory (protocol/curve_keys.hpp)
  bool insecure_plaintext = false;
  int max_message_bytes = 16 << 20;
};

struct ZmqBridgeStats {
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t dropped_out = 0;        // no connection for the identity, or the send failed
  uint64_t auth_refused = 0;       // ZAP said no
  uint64_t malformed_in = 0;       // messages not of the shape [routing id][payload]
  uint64_t busy_turns = 0;         // turns that moved at least one frame in or out
  int64_t longest_turn_us = 0;     // the longest the bridge spent away from its poll()
};

// A received frame's bytes, left in ZeroMQ's buffer: the bridge no longer copies every
// inbound frame into a string of its own (a malloc, a copy and a free per frame). Copying one
// shares the buffer (ZeroMQ's reference count).
class InboundPayload {
 public:
  InboundPayload() = default;
  explicit InboundPayload(zmq::message_t&& msg) : msg_(std::move(msg)) {}
  explicit InboundPayload(std::string_view bytes) : msg_(bytes.data(), bytes.size()) {}
  InboundPayload(const InboundPayload& other) { msg_.copy(other.msg_); }
  InboundPayload& operator=(const InboundPayload& other) {
    if (this != &other) msg_.copy(other.msg_);
    return *this;
  }
  InboundPayload(InboundPayload&&) = default;
  InboundPayload& operator=(InboundPayload&&) = default;
  std::string_view view() const { return msg_.to_string_view(); }
  operator std::string_view() const { return view(); }

 private:
  mutable zmq::message_t msg_;  // copy() takes a non-const source; it only shares the bytes
};

// A frame from an agent: `peer` is its identity (CURVE public key, or the routing id on a
// plaintext link), `address` its IP address, `received` when the bridge read it.
struct InboundFrame {
  std::string peer;
  InboundPayload payload;
  std::string address;
  std::chrono::steady_clock::time_point received;
};

// A frame to send: its own bytes, or a slice of a buffer its producer shares (a job frame the
// ledger keeps for a requeue, actors/job_ledger.hpp): ZeroMQ then sends straight out of that
// buffer and releases its share when done, so a job's code is not copied on its way out.
struct OutboundFrame {
  std::string peer;
  std::string payload;                        // the bytes, when `shared` is null
  std::shared_ptr<const std::string> shared;  // else bytes [offset, offset + size) of *shared
  std::size_t offset = 0;
  std::size_t size = 0;
};

class ZmqBridge {
 public:
  using Clock = std::chrono::steady_clock;
  // Gets every frame one turn of the bridge read, in order: one hand-over per turn, not per
  // frame, so a busy fleet costs the dispatcher one mailbox message per batch.
  using InboundFn = std::function<void(std::vector<InboundFrame> frames)>;

  // Binds the ROUTER (CURVE server when a secret key is given). Throws std::runtime_error.
  explicit ZmqBridge(ZmqBridgeOptions options);
  // Plaintext on `endpoint`; loopback only (see above). For tests and `palladium eval`.
  explicit ZmqBridge(const std::string& endpoint);
  ~ZmqBridge();
  ZmqBridge(const ZmqBridge&) = delete;
  ZmqBridge& operator=(const ZmqBridge&) = delete;

  // The endpoint actually bound, with the port resolved.
  const std::string& endpoint() const { return endpoint_; }
  bool authenticated() const { return curve_; }
  // The server's public key (Z85); empty on a plaintext link.
  const std::string& public_key() const { return public_key_; }

  // Adds keys to the allowlist. Thread-safe; takes effect for the next connection.
  void allow(const std::string& public_key);

  // Starts the I/O thread; `on_inbound` runs on it with the well-formed two-frame messages
  // [routing id][payload] from authenticated peers. Other shapes are counted and dropped.
  void start(InboundFn on_inbound);
  // Thread-safe; returns immediately.
  void send(std::string peer, std::string payload);
  void send_many(std::vector<std::pair<std::string, std::string>> frames);
  void send_many(std::vector<OutboundFrame> frames);
  // Stops and joins the I/O thread; idempotent and thread-safe.
  void stop();

  // The pause after a turn that moved frames (see Batching above); 0 = none. Thread-safe.
  void set_batch_window(std::chrono::microseconds window) { batch_window_us_ = window.count(); }
  std::chrono::microseconds batch_window() const {
    return std::chrono::microseconds(batch_window_us_.load());
  }

  // Counters so far. Thread-safe.
  ZmqBridgeStats stats() const;
  // The longest turn so far, which then starts again from 0 (a measured window). Thread-safe.
  int64_t take_longest_turn_us() { return longest_turn_us_.exchange(0); }

 private:
  void bind(const ZmqBridgeOptions& options);
  void loop();
  void wake();
  int answer_zap();
  bool key_allowed(const std::string& z85);
  // Sends the first `limit` frames of `batch` and removes them; returns how many.
  size_t flush_outbox(std::deque<OutboundFrame>& batch, size_t limit);

  zmq::context_t ctx_;
  std::optional<zmq::socket_t> zap_;
  zmq::socket_t router_;
  std::string endpoint_;
  bool curve_ = false;
  std::string public_key_;
  std::string allow_path_;
  int wake_fd_ = -1;
  InboundFn on_inbound_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::mutex mutex_;
  std::deque<OutboundFrame> outbox_;  // guarded by mutex_
  std::mutex allow_mutex_;
  std::unordered_set<std::string> allowed_;  // guarded by allow_mutex_
  Clock::time_point last_rescan_{};          // bridge thread only
  // identity -> its latest connection (CURVE only; bridge thread only)
  struct Route {
    std::string routing_id;
    std::string address;  // the connection's Peer-Address, looked up once per connection
  };
  std::unordered_map<std::string, Route> routes_;  // entries are never erased
  // routing id -> the identity its connection's frames carry, and that identity's route
  // (CURVE only; bridge thread only): a frame then costs a hash of its few-byte routing id,
  // not of its 40-byte key. A cache, checked against every frame's User-Id (a connection
  // that takes a routing id over cannot borrow another key's identity), and cleared when it
  // outgrows the fleet (connections come and go; their routing ids are not reused).
  struct Connection {
    std::string peer;
    Route* route = nullptr;
  };
  std::unordered_map<std::string, Connection> connections_;

  std::atomic<uint64_t> frames_in_{0}, frames_out_{0}, dropped_out_{0}, auth_refused_{0},
      malformed_in_{0}, busy_turns_{0};
  std::atomic<int64_t> longest_turn_us_{0};
  std::atomic<int64_t> batch_window_us_{0};
};

}  // namespace palladium
