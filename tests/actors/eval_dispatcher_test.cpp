// The dispatcher over a real ROUTER socket, with test DEALER sockets playing
// agents: jobs reach agents, results reach the requester, garbage frames are
// dropped, and a silent agent's job is finished by another agent.
#include "actors/eval_dispatcher.hpp"

#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "actors/messages.hpp"

namespace palladium {
namespace {

using namespace std::chrono_literals;

class FakeAgent {
 public:
  FakeAgent(zmq::context_t& ctx, const std::string& endpoint, const std::string& id)
      : sock_(ctx, zmq::socket_type::dealer), id_(id) {
    sock_.set(zmq::sockopt::routing_id, id);
    sock_.set(zmq::sockopt::linger, 0);
    sock_.connect(endpoint);
  }
  void send(const wire::Message& m) { send_raw(wire::encode(m)); }
  void send_raw(const std::string& bytes) { sock_.send(zmq::buffer(bytes), zmq::send_flags::none); }
  void hello(int slots) {
    wire::Hello h;
    h.agent_id = id_;
    h.backend = "interpret";
    h.slots = slots;
    send(h);
  }
  // Next non-heartbeat message, or nullopt after `timeout`.
  std::optional<wire::Message> next(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 20ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t msg;
      (void)sock_.recv(msg);
      auto d = wire::decode(msg.to_string_view());
      if (d.ok() && !std::holds_alternative<wire::Heartbeat>(*d.message)) return d.message;
    }
    return std::nullopt;
  }
  void heartbeat() { send(wire::Heartbeat{id_}); }

 private:
  zmq::socket_t sock_;
  std::string id_;
};

wire::Job make_job(int64_t id) {
  wire::Job j;
  j.job_id = id;
  j.workload_id = "8p";
  j.code = "code";
  j.timeout_s = 30;
  j.seeds = {0, 1};
  return j;
}

wire::Result answer(const wire::Job& j, const std::string& agent) {
  wire::Result r;
  r.job_id = j.job_id;
  r.agent_id = agent;
  r.verdict = "correct";
  r.kernel_ms = 2.0;
  return r;
}

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() : sys(make_cfg()) {}
  static caf::actor_system_config& make_cfg() {
    static caf::actor_system_config cfg;
    cfg.set("scheduler.max-threads", 2);
    return cfg;
  }
  void TearDown() override {
    caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
    sys.await_all_actors_done();
  }
  void start(JobLedger::Options o) {
    bridge = std::make_shared<ZmqBridge>("tcp://127.0.0.1:0");
    dispatcher = spawn_eval_dispatcher(sys, bridge, o);
  }
  caf::actor_system sys;
  std::shared_ptr<ZmqBridge> bridge;
  caf::actor dispatcher;
  zmq::context_t ctx;
};

// Sends `job` to the dispatcher from a scoped actor on another thread and
// returns a future of the result (a blocking request must not stall the
// fake agents driven by the test thread).
std::future<std::optional<wire::Result>> request_eval(caf::actor_system& sys, caf::actor d,
                                                      wire::Job job) {
  return std::async(std::launch::async, [&sys, d, job] {
    caf::scoped_actor self{sys};
    std::optional<wire::Result> got;
    self->request(d, std::chrono::seconds(10), eval_atom::value, job)
        .receive([&](wire::Result& r) { got = r; }, [](caf::error&) {});
    return got;
  });
}

TEST_F(DispatcherTest, JobGoesToAgentAndResultComesBack) {
  start({});
  FakeAgent agent(ctx, bridge->endpoint(), "A");
  agent.hello(1);
  auto job = make_job(42);
  auto pending = request_eval(sys, dispatcher, job);
  auto received = agent.next(5s);
  ASSERT_TRUE(received);
  ASSERT_TRUE(std::holds_alternative<wire::Job>(*received));
  EXPECT_EQ(std::get<wire::Job>(*received).job_id, 42);
  agent.send_raw("\xc1 not msgpack");  // dropped, not fatal
  agent.send(answer(job, "A"));
  agent.send(answer(job, "A"));  // duplicate: ignored
  auto got = pending.get();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->job_id, 42);
  EXPECT_EQ(got->verdict, "correct");
  // Still serving after the garbage frame.
  auto second_pending = request_eval(sys, dispatcher, make_job(43));
  auto second = agent.next(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(std::get<wire::Job>(*second).job_id, 43);
  agent.send(answer(make_job(43), "A"));
  EXPECT_TRUE(second_pending.get());
}

TEST_F(DispatcherTest, SilentAgentsJobIsRequeuedToAnotherAgent) {
  JobLedger::Options o;
  o.heartbeat = 50ms;
  o.liveness = 3;
  start(o);
  FakeAgent a(ctx, bridge->endpoint(), "A");
  a.hello(1);
  std::this_thread::sleep_for(100ms);  // A registers before B, so A gets the job
  auto job = make_job(7);
  auto pending = request_eval(sys, dispatcher, job);
  auto first = a.next(5s);
  ASSERT_TRUE(first);
  FakeAgent b(ctx, bridge->endpoint(), "B");
  b.hello(1);
  // B stays alive, A says nothing more: after 150 ms A is dead and B gets job 7.
  std::optional<wire::Message> requeued;
  for (int i = 0; i < 100 && !requeued; ++i) {
    b.heartbeat();
    requeued = b.next(30ms);
  }
  ASSERT_TRUE(requeued);
  EXPECT_EQ(std::get<wire::Job>(*requeued).job_id, 7);
  b.send(answer(job, "B"));
  auto got = pending.get();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->agent_id, "B");
  caf::scoped_actor self{sys};
  int32_t agents = -1;
  self->request(dispatcher, caf::infinite, agents_atom::value).receive([&](int32_t n) { agents = n; },
                                                                      [](caf::error&) {});
  EXPECT_EQ(agents, 1) << "A was declared dead";
}

}  // namespace
}  // namespace palladium
