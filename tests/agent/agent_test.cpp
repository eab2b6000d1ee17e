// The agent against a test ROUTER that plays the coordinator, with the fake judge.

#include "agent/agent.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/wire_protocol.hpp"
#include "tests/agent/test_support.hpp"

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A ROUTER on an ephemeral loopback port. While waiting it heartbeats the agent every
// 100 ms unless `keep_alive` is false.
class FakeCoordinator {
 public:
  FakeCoordinator() : router_(ctx_, zmq::socket_type::router) {
    router_.set(zmq::sockopt::linger, 0);
    router_.set(zmq::sockopt::router_handover, 1);
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  }

  const std::string& endpoint() const { return endpoint_; }
  bool keep_alive = true;
  int heartbeats_seen = 0;
  int hellos_seen = 0;

  void send_raw(const std::string& bytes) {
    ASSERT_FALSE(peer_.empty()) << "no agent has said hello yet";
    std::array<zmq::const_buffer, 2> parts{zmq::buffer(peer_), zmq::buffer(bytes)};
    ASSERT_TRUE(zmq::send_multipart(router_, parts));
  }
  void send(const wire::Message& m) { send_raw(wire::encode(m)); }

  // Waits for the next frame of type T (others are counted and skipped).
  template <class T>
  std::optional<T> expect(std::chrono::milliseconds timeout = 20s) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (keep_alive && !peer_.empty() && Clock::now() >= next_beat_) {
        send(wire::Heartbeat{"coordinator"});
        next_beat_ = Clock::now() + 100ms;
      }
      zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 20ms);
      std::vector<zmq::message_t> parts;
      while (zmq::recv_multipart(router_, std::back_inserter(parts), zmq::recv_flags::dontwait)) {
        EXPECT_EQ(parts.size(), 2u);
        if (parts.size() != 2) continue;
        peer_ = parts[0].to_string();
        wire::DecodeResult d = wire::decode(parts[1].to_string());
        EXPECT_TRUE(d.ok()) << "agent sent a bad frame: " << d.error;
        parts.clear();
        if (!d.ok()) continue;
        if (std::holds_alternative<wire::Heartbeat>(*d.message)) ++heartbeats_seen;
        if (std::holds_alternative<wire::Hello>(*d.message)) ++hellos_seen;
        if (auto* t = std::get_if<T>(&*d.message)) return *t;
      }
    }
    return std::nullopt;
  }

  std::optional<wire::Result> result_for(int64_t job_id, std::chrono::milliseconds timeout = 20s) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      auto r = expect<wire::Result>(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now()));
      if (r && r->job_id == job_id) return r;
    }
    return std::nullopt;
  }

 private:
  zmq::context_t ctx_{1};
  zmq::socket_t router_;
  std::string endpoint_;
  std::string peer_;
  Clock::time_point next_beat_;
};

// Runs an Agent in a thread; stops and joins it on destruction.
class AgentThread {
 public:
  explicit AgentThread(AgentOptions options) : agent_(std::move(options)) {
    thread_ = std::thread([this] { rc_ = agent_.run(); });
  }
  ~AgentThread() { stop(); }
  int stop() {
    agent_.request_stop();
    if (thread_.joinable()) thread_.join();
    return rc_;
  }
  Agent& agent() { return agent_; }

 private:
  Agent agent_;
  std::thread thread_;
  int rc_ = -1;
};

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("agent-test");
    options_.connect_endpoint = coordinator_.endpoint();
    options_.agent_id = "test-agent";
    options_.python = testing::test_python();
    options_.home = testing::fake_home();
    options_.judge_module = testing::kFakeModule;
    options_.log_dir = dir_;
    options_.slots = 1;
    options_.heartbeat_ms = 100;
    options_.liveness = 10;
    options_.judge_start_timeout_ms = 30000;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static wire::Job job(int64_t id, std::string code, double timeout_s = 30.0) {
    return wire::Job{id, 0, "8p", std::move(code), "full", timeout_s, {0}, true, {}};
  }

  FakeCoordinator coordinator_;
  AgentOptions options_;
  std::string dir_;
};

TEST_F(AgentTest, HelloJobResultHeartbeatsAndBye) {
  options_.slots = 2;
  AgentThread agent(options_);
  auto hello = coordinator_.expect<wire::Hello>();
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->agent_id, "test-agent");
  EXPECT_EQ(hello->slots, 2);
  EXPECT_EQ(hello->backend, "interpret");
  EXPECT_EQ(hello->device_kind, "cpu");
  EXPECT_EQ(hello->jax_version, "0.0-fake");

  coordinator_.send(job(1, "def workload(a, b): return a @ b"));
  auto r = coordinator_.result_for(1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(r->agent_id, "test-agent");
  EXPECT_EQ(r->backend, "interpret");
  EXPECT_EQ(r->evaluation.kernel_ms, 0.25);

  int before = coordinator_.heartbeats_seen;
  coordinator_.expect<wire::Bye>(600ms);  // just listen for a while
  EXPECT_GE(coordinator_.heartbeats_seen - before, 3);
  EXPECT_EQ(coordinator_.hellos_seen, 1);

  agent.agent().request_stop();
  auto bye = coordinator_.expect<wire::Bye>();
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->agent_id, "test-agent");
  EXPECT_EQ(agent.stop(), kExitOk);
}

TEST_F(AgentTest, SlotsRunJobsConcurrentlyAndExtraJobsQueue) {
  options_.slots = 2;
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());
  auto t0 = Clock::now();
  coordinator_.send(job(1, "SLEEP_MS=600"));
  coordinator_.send(job(2, "SLEEP_MS=600"));
  coordinator_.send(job(3, "SLEEP_MS=10"));  // over-assigned: queued locally
  std::set<int64_t> done;
  while (done.size() < 3) {
    auto r = coordinator_.expect<wire::Result>();
    ASSERT_TRUE(r) << "missing results, have " << done.size();
    EXPECT_EQ(r->evaluation.verdict, Verdict::correct);
    done.insert(r->job_id);
    if (done.size() == 2) {
      // Jobs 1 and 2 ran side by side, not one after the other.
      EXPECT_LT(Clock::now() - t0, 1100ms);
    }
  }
  EXPECT_EQ(done, (std::set<int64_t>{1, 2, 3}));
}

TEST_F(AgentTest, GarbageFramesAreDroppedAndTheAgentKeepsWorking) {
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());
  coordinator_.send_raw("this is not msgpack \xc1\xc1");
  coordinator_.send_raw(std::string("\x92\x01\x02", 3));  // an array, not a map
  coordinator_.send_raw(wire::encode(wire::Heartbeat{"c"}) + "junk");
  coordinator_.send_raw("");
  wire::Hello stray;
  stray.agent_id = "x";
  stray.slots = 1;
  coordinator_.send(stray);  // a type the agent does not take
  coordinator_.send(job(5, "ok"));
  auto r = coordinator_.result_for(5);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(coordinator_.hellos_seen, 1);  // no reconnect was needed
}

TEST_F(AgentTest, TimeoutAndCrashAreReportedAndTheJudgeRestarted) {
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());

  coordinator_.send(job(10, "SLEEP_FOREVER", 0.5));
  auto t = coordinator_.result_for(10);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->evaluation.verdict, Verdict::timeout);
  EXPECT_EQ(t->agent_id, "test-agent");
  EXPECT_NE(t->evaluation.error.find("timeout_s=0.5"), std::string::npos) << t->evaluation.error;
  EXPECT_NE(t->evaluation.error.find("killed"), std::string::npos) << t->evaluation.error;

  EXPECT_FALSE(t->evaluation.timing_kind.has_value()) << "a failure is untimed";

  // A judge that dies under every attempt: retried on fresh judges, then charged.
  coordinator_.send(job(11, "EXIT_ABRUPTLY"));
  auto c = coordinator_.result_for(11, 60s);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->evaluation.verdict, Verdict::crash);
  EXPECT_NE(c->evaluation.error.find("the judge died 3 times"), std::string::npos) << c->evaluation.error;
  EXPECT_NE(c->evaluation.error.find("exit status 3"), std::string::npos) << c->evaluation.error;
  EXPECT_NE(c->evaluation.error.find("dying abruptly"), std::string::npos) << c->evaluation.error;

  coordinator_.send(job(12, "PRINT_NOISE"));
  auto ok = coordinator_.result_for(12);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(ok->evaluation.stdout_text, "captured candidate output\n");
}

TEST_F(AgentTest, AJudgeLostOnceIsAnInfrastructureFaultAndTheJobIsRetried) {
  std::string marker = testing::make_temp_dir("die-once") + "/died";
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());
  coordinator_.send(job(30, "DIE_ONCE=" + marker));
  auto r = coordinator_.result_for(30, 60s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evaluation.verdict, Verdict::correct) << "the first judge's death is not the candidate's";
  EXPECT_TRUE(std::filesystem::exists(marker));
  std::filesystem::remove_all(std::filesystem::path(marker).parent_path());
}

TEST_F(AgentTest, SecretValuesAreScrubbedFromEveryResultText) {
  ::setenv("PALLADIUM_TEST_API_KEY", "sk-agent-secret-4242", 1);
  ::setenv("PALLADIUM_SECRET_ENV", "INNOCENT_NAME", 1);
  ::setenv("INNOCENT_NAME", "hunter2-is-secret", 1);
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());
  ::unsetenv("PALLADIUM_TEST_API_KEY");
  ::unsetenv("PALLADIUM_SECRET_ENV");
  ::unsetenv("INNOCENT_NAME");
  coordinator_.send(job(31, "ECHO_TEXT=key sk-agent-secret-4242 and hunter2-is-secret!"));
  auto r = coordinator_.result_for(31);
  ASSERT_TRUE(r);
  for (const std::string* text : {&r->evaluation.error, &r->evaluation.stdout_text, &r->evaluation.stderr_text,
                                  &r->evaluation.error_signature}) {
    EXPECT_EQ(text->find("sk-agent-secret-4242"), std::string::npos) << *text;
    EXPECT_EQ(text->find("hunter2-is-secret"), std::string::npos) << *text;
  }
  EXPECT_NE(r->evaluation.error.find("key [secret] and [secret]!"), std::string::npos) << r->evaluation.error;
}

TEST_F(AgentTest, ReconnectsAfterTheCoordinatorGoesSilent) {
  options_.liveness = 3;
  AgentThread agent(options_);
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());
  coordinator_.keep_alive = false;
  // Silent for 3 x 100 ms: the agent drops the socket and says hello again after backoff.
  auto t0 = Clock::now();
  auto again = coordinator_.expect<wire::Hello>(5s);
  ASSERT_TRUE(again);
  EXPECT_GE(Clock::now() - t0, 250ms);
  EXPECT_EQ(again->agent_id, "test-agent");
  coordinator_.keep_alive = true;
  coordinator_.send(job(20, "ok"));
  auto r = coordinator_.result_for(20);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evaluation.verdict, Verdict::correct);
}

TEST_F(AgentTest, SigtermSendsByeAndExitsZero) {
  int rc = -1;
  std::thread t([&] { rc = run_agent(options_); });
  ASSERT_TRUE(coordinator_.expect<wire::Hello>());  // handlers are installed by now
  ::kill(::getpid(), SIGTERM);
  auto bye = coordinator_.expect<wire::Bye>();
  t.join();
  ASSERT_TRUE(bye);
  EXPECT_NE(bye->reason.find("signal 15"), std::string::npos) << bye->reason;
  EXPECT_EQ(rc, kExitOk);
}

TEST_F(AgentTest, TpuBackendWithoutTpuRefusesToStart) {
  options_.backend = "tpu";
  Agent agent(options_);
  EXPECT_EQ(agent.run(), kExitJudgeFailed);
  EXPECT_EQ(coordinator_.hellos_seen, 0);
}

TEST_F(AgentTest, BadOptionsAreRejected) {
  options_.backend = "gpu";
  Agent agent(options_);
  EXPECT_EQ(agent.run(), kExitBadOptions);
}

// Opt-in (slow: imports JAX): PALLADIUM_AGENT_REAL_JUDGE=1 runs the real
// `python -m judge --backend interpret` behind the agent.
TEST_F(AgentTest, RealJudgeSmoke) {
  if (std::getenv("PALLADIUM_AGENT_REAL_JUDGE") == nullptr) {
    GTEST_SKIP() << "set PALLADIUM_AGENT_REAL_JUDGE=1 to run";
  }
  options_.home = PALLADIUM_SOURCE_DIR;
  options_.judge_module = "judge";
  options_.judge_start_timeout_ms = 180000;
  AgentThread agent(options_);
  auto hello = coordinator_.expect<wire::Hello>(180s);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->device_kind, "cpu");
  EXPECT_FALSE(hello->jax_version.empty());
  coordinator_.send(job(1, testing::kGemm, 170.0));
  auto r = coordinator_.result_for(1, 180s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evaluation.verdict, Verdict::correct) << spelling(r->evaluation.stage) << ": " << r->evaluation.error;
  EXPECT_EQ(r->evaluation.timing_kind, TimingKind::cpu_wall);
  coordinator_.send(job(2, "this is not python(", 170.0));
  auto bad = coordinator_.result_for(2, 180s);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->evaluation.verdict, Verdict::syntax_error) << bad->evaluation.error;
  EXPECT_FALSE(bad->evaluation.timing_kind.has_value()) << "a failure is untimed";
}

TEST(AgentOptionsTest, Defaults) {
  AgentOptions o = with_defaults(AgentOptions{});
  EXPECT_FALSE(o.agent_id.empty());
  EXPECT_NE(o.agent_id.find(std::to_string(::getpid())), std::string::npos);
  EXPECT_FALSE(o.home.empty());
  EXPECT_FALSE(o.python.empty());
  EXPECT_NE(o.log_dir.find(o.agent_id), std::string::npos);
  EXPECT_EQ(o.judge_module, "judge");
}

}  // namespace
}  // namespace palladium::agent
