// The coordinator link against a bare ROUTER: hello on start, results kept across a reconnect,
// bad frames dropped, heartbeats and the reconnect backoff driven by the caller's clock.

#include "agent/coordinator_link.hpp"

#include <array>
#include <thread>

#include <gtest/gtest.h>
#include <zmq_addon.hpp>

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;
using Clock = CoordinatorLink::Clock;

class Router {
 public:
  Router() : sock_(ctx_, zmq::socket_type::router) {
    sock_.set(zmq::sockopt::linger, 0);
    sock_.set(zmq::sockopt::router_handover, 1);
    sock_.bind("tcp://127.0.0.1:*");
    endpoint_ = sock_.get(zmq::sockopt::last_endpoint);
  }
  const std::string& endpoint() const { return endpoint_; }

  // The next frame from the agent, decoded; nullopt after 5 s.
  std::optional<wire::Message> next() {
    zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, 5s) <= 0) return std::nullopt;
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(sock_, std::back_inserter(parts))) return std::nullopt;
    EXPECT_EQ(parts.size(), 2u);
    peer_ = parts[0].to_string();
    auto d = wire::decode(parts.back().to_string_view());
    EXPECT_TRUE(d.ok()) << d.error;
    return d.message;
  }
  void send_raw(const std::string& bytes) {
    std::array<zmq::const_buffer, 2> parts{zmq::buffer(peer_), zmq::buffer(bytes)};
    ASSERT_TRUE(zmq::send_multipart(sock_, parts));
  }
  const std::string& peer() const { return peer_; }

 private:
  zmq::context_t ctx_{1};
  zmq::socket_t sock_;
  std::string endpoint_;
  std::string peer_;
};

// Polls the link until it yields at least one message or 5 s pass.
std::vector<wire::Message> receive_some(CoordinatorLink& link) {
  auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    auto item = link.poll_item();
    if (!item) return {};
    zmq::poll(&*item, 1, 20ms);
    auto got = link.receive(Clock::now());
    if (!got.empty()) return got;
  }
  return {};
}

CoordinatorLink::Options options(const std::string& endpoint) {
  CoordinatorLink::Options o;
  o.endpoint = endpoint;
  o.agent_id = "link-test";
  o.heartbeat_ms = 100;
  o.liveness = 3;
  o.reconnect_max_ms = 400;
  return o;
}

wire::Hello hello() {
  wire::Hello h;
  h.agent_id = "link-test";
  h.backend = "interpret";
  h.device_kind = "cpu";
  h.jax_version = "0.0-test";
  h.slots = 2;
  h.stages = {"lint", "numerics"};
  return h;
}

TEST(CoordinatorLinkTest, StartSendsHelloUnderAFreshRandomRoutingId) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  auto t0 = Clock::now();
  link.start(hello(), t0);
  auto m = router.next();
  ASSERT_TRUE(m);
  auto* h = std::get_if<wire::Hello>(&*m);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->slots, 2);
  EXPECT_EQ(h->agent_id, "link-test");
  // Nobody can guess the routing id and so take over the agent's connection.
  std::string first = router.peer();
  EXPECT_EQ(first.size(), 32u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos) << first;
  link.on_timers(t0 + 301ms);  // silent: drop
  link.on_timers(t0 + 402ms);  // reconnect
  ASSERT_TRUE(link.connected());
  while (auto again = router.next()) {
    if (std::holds_alternative<wire::Hello>(*again)) break;
  }
  EXPECT_NE(router.peer(), first) << "a new connection, a new routing id";
}

// The benchmark's swarm runs many links over one context (bench/bench_swarm.hpp): each is its
// own connection, and each answer reaches its own link.
TEST(CoordinatorLinkTest, LinksSharingAContextAreSeparateConnections) {
  Router router;
  zmq::context_t shared(1);
  CoordinatorLink a(options(router.endpoint()), shared), b(options(router.endpoint()), shared);
  auto t0 = Clock::now();
  a.start(hello(), t0);
  ASSERT_TRUE(router.next());
  const std::string peer_a = router.peer();
  b.start(hello(), t0);
  ASSERT_TRUE(router.next());
  EXPECT_NE(router.peer(), peer_a);
  router.send_raw(wire::encode(wire::Heartbeat{"coordinator", 250}));
  auto got = receive_some(b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(b.interval_ms(), 250);
  EXPECT_EQ(a.interval_ms(), 100) << "the other link heard nothing";
}

TEST(CoordinatorLinkTest, TheCoordinatorsIntervalAndByeAreFollowed) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  auto t0 = Clock::now();
  link.start(hello(), t0);
  ASSERT_TRUE(router.next());
  router.send_raw(wire::encode(wire::Heartbeat{"coordinator", 2000}));
  ASSERT_FALSE(receive_some(link).empty());
  EXPECT_EQ(link.interval_ms(), 2000);
  // Silence is now judged against 3 x 2 s, not 3 x 100 ms.
  link.on_timers(Clock::now() + 1000ms);
  EXPECT_TRUE(link.connected());
  router.send_raw(wire::encode(wire::Bye{"coordinator", "refused: slots"}));
  ASSERT_FALSE(receive_some(link).empty());
  link.on_timers(Clock::now());
  EXPECT_FALSE(link.connected()) << "a bye closes the session; hello again after the backoff";
}

TEST(CoordinatorLinkTest, BadFramesAreDroppedAndGoodOnesDelivered) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  link.start(hello(), Clock::now());
  ASSERT_TRUE(router.next());
  router.send_raw("\xc1 not msgpack");
  router.send_raw(wire::encode(wire::Heartbeat{"coordinator"}));
  std::vector<wire::Message> got;
  auto deadline = Clock::now() + 5s;
  while (got.empty() && Clock::now() < deadline) got = receive_some(link);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<wire::Heartbeat>(got[0]));
}

TEST(CoordinatorLinkTest, HeartbeatsFollowTheCallersClock) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  auto t0 = Clock::now();
  link.start(hello(), t0);
  ASSERT_TRUE(router.next());
  EXPECT_LE(link.next_wakeup(t0), t0 + 100ms);
  link.on_timers(t0 + 50ms);  // not due yet: nothing sent
  link.on_timers(t0 + 100ms);
  auto m = router.next();
  ASSERT_TRUE(m);
  EXPECT_TRUE(std::holds_alternative<wire::Heartbeat>(*m));
}

TEST(CoordinatorLinkTest, SilentCoordinatorMeansReconnectWithBackoffAndKeptResults) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  auto t0 = Clock::now();
  link.start(hello(), t0);
  ASSERT_TRUE(router.next());
  // 3 x 100 ms of silence: the link gives up on the socket.
  link.on_timers(t0 + 301ms);
  EXPECT_FALSE(link.connected());
  wire::Result r;
  r.job_id = 7;
  r.evaluation.verdict = Verdict::correct;
  link.send(r);  // kept for the next connection
  link.on_timers(t0 + 350ms);  // backoff (100 ms) not over yet
  EXPECT_FALSE(link.connected());
  link.on_timers(t0 + 402ms);
  ASSERT_TRUE(link.connected());
  bool saw_hello = false, saw_result = false;
  // The old socket may still deliver its last heartbeat first.
  while (!(saw_hello && saw_result)) {
    auto m = router.next();
    ASSERT_TRUE(m) << "hello " << saw_hello << ", result " << saw_result;
    saw_hello |= std::holds_alternative<wire::Hello>(*m);
    if (auto* got = std::get_if<wire::Result>(&*m)) saw_result = got->job_id == 7;
  }
  EXPECT_TRUE(saw_hello);
  EXPECT_TRUE(saw_result);
}

TEST(CoordinatorLinkTest, CloseSendsBye) {
  Router router;
  CoordinatorLink link(options(router.endpoint()));
  link.start(hello(), Clock::now());
  ASSERT_TRUE(router.next());
  link.close("done here");
  auto m = router.next();
  ASSERT_TRUE(m);
  auto* bye = std::get_if<wire::Bye>(&*m);
  ASSERT_NE(bye, nullptr);
  EXPECT_EQ(bye->reason, "done here");
  EXPECT_FALSE(link.connected());
}

}  // namespace
}  // namespace palladium::agent
