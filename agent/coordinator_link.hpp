// CoordinatorLink: the agent's end of the wire link to the coordinator (protocol/wire_protocol.hpp).
//
// It owns the DEALER socket and follows zguide's Paranoid Pirate worker: `hello` on every
// (re)connect, a heartbeat whenever nothing else was sent for one interval, and after
// `liveness` silent intervals the coordinator is declared dead: the socket is closed and a new
// one connects after an exponential backoff (heartbeat_ms doubling up to reconnect_max_ms; a
// frame from the coordinator resets it). The interval starts at heartbeat_ms and follows the
// coordinator's heartbeats that carry one (it stretches them as the fleet grows). A BYE from
// the coordinator (a refused HELLO, or a coordinator that restarted and does not know us)
// closes the socket and says hello again after the backoff, which keeps doubling while it
// refuses. Results sent while disconnected are kept and sent after the next hello, so a
// finished evaluation is never lost to a network drop.
//
// Authentication: with a server key the socket is a CURVE client holding the agent's key pair
// (the coordinator knows the agent by its public key). Every connection picks a fresh random
// routing id, which nobody else learns. Without a server key the link is plaintext.
//
// The link does no polling of its own: the agent's single poll loop asks for poll_item(),
// calls receive() when it is readable and on_timers() on every turn, and sleeps no longer than
// next_wakeup(). Malformed frames from the coordinator are logged and dropped.
//
// Threading: not thread-safe; one owner (the agent's loop thread).

#ifndef PALLADIUM_AGENT_COORDINATOR_LINK_HPP_
#define PALLADIUM_AGENT_COORDINATOR_LINK_HPP_

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/wire_protocol.hpp"

namespace palladium::agent {

class CoordinatorLink {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    std::string endpoint;      // the coordinator's ROUTER, e.g. tcp://host:5555
    std::string agent_id;      // routing id and the id in every frame
    int heartbeat_ms = 500;
    int liveness = 4;          // silent intervals before the coordinator counts as gone
    int reconnect_max_ms = 32000;
    std::string server_key;   // the coordinator's public key (Z85); empty = plaintext
    std::string public_key;   // the agent's key pair (Z85), required with server_key
    std::string secret_key;
    int max_message_bytes = 16 << 20;  // ZMQ_MAXMSGSIZE: a larger frame drops the connection
  };

  // Does no I/O. The link owns its ZeroMQ context (one I/O thread).
  explicit CoordinatorLink(Options options);
  // Over `context`, which must outlive the link: many links in one process (the benchmark's
  // simulated agents, bench/bench_swarm.hpp) share its I/O thread.
  CoordinatorLink(Options options, zmq::context_t& context);
  ~CoordinatorLink();
  CoordinatorLink(const CoordinatorLink&) = delete;
  CoordinatorLink& operator=(const CoordinatorLink&) = delete;

  // Connects and sends `hello` (kept, and sent again on every reconnect), then whatever
  // results were kept while disconnected. Throws zmq::error_t if the endpoint is malformed.
  void start(wire::Hello hello, Clock::time_point now);

  bool connected() const { return socket_.has_value(); }

  // The heartbeat interval in force (heartbeat_ms until the coordinator says otherwise).
  long interval_ms() const { return interval_ms_; }

  // The socket's poll entry (POLLIN); nullopt while disconnected.
  std::optional<zmq::pollitem_t> poll_item();

  // Drains every frame the socket holds and returns the well-formed ones in order. Any frame
  // counts as proof of life; heartbeats and BYEs are acted on here (interval, reconnect) and
  // returned too. Multi-part and undecodable frames are logged and dropped.
  std::vector<wire::Message> receive(Clock::time_point now);

  // Sends one frame without blocking. While disconnected a Result is kept for the next
  // connection and anything else is dropped (a heartbeat or hello would be stale).
  void send(const wire::Message& message);

  // Sends a heartbeat when nothing went out for an interval, declares a silent coordinator
  // gone, and reconnects when the backoff has passed.
  void on_timers(Clock::time_point now);

  // The latest time the owner may sleep until before calling on_timers() again.
  Clock::time_point next_wakeup(Clock::time_point now) const;

  // Sends `bye` with `reason` (given up to a second to leave) and closes the socket.
  void close(const std::string& reason);

 private:
  void connect(Clock::time_point now);
  void drop_connection(Clock::time_point now, const std::string& why);

  Options opt_;
  wire::Hello hello_;
  std::optional<zmq::context_t> own_ctx_;  // unless shared
  zmq::context_t* ctx_;
  std::optional<zmq::socket_t> socket_;
  std::deque<wire::Result> unsent_;  // finished while disconnected
  Clock::time_point last_heard_;
  Clock::time_point last_sent_;
  Clock::time_point reconnect_at_;
  long backoff_ms_ = 0;
  long interval_ms_ = 0;
  bool reconnect_asap_ = false;  // a BYE arrived inside receive(): reconnect on the next timer
};

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_COORDINATOR_LINK_HPP_
