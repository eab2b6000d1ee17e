#include "coordinator/coordinator.hpp"

#include <thread>

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(Coordinator, SchedulerThreadsDefaultToTheCoreCount) {
  unsigned cores = std::thread::hardware_concurrency();
  EXPECT_EQ(scheduler_threads_for(0), cores == 0 ? 2 : static_cast<int>(cores));
  EXPECT_EQ(scheduler_threads_for(3), 3);
}

TEST(Coordinator, LocalAgentsDialLoopbackForAWildcardBind) {
  EXPECT_EQ(local_connect_endpoint("tcp://0.0.0.0:5555"), "tcp://127.0.0.1:5555");
  EXPECT_EQ(local_connect_endpoint("tcp://*:5555"), "tcp://127.0.0.1:5555");
  EXPECT_EQ(local_connect_endpoint("tcp://127.0.0.1:42"), "tcp://127.0.0.1:42");
}

TEST(Coordinator, ABindFailureNamesTheListenKey) {
  CoordinatorOptions o;
  o.link.listen = "tcp://203.0.113.7:1";  // TEST-NET-3: never an address of this host
  try {
    Coordinator c(o);
    FAIL() << "bound an address this host does not have";
  } catch (const CoordinatorError& e) {
    EXPECT_EQ(e.key(), "agents.listen");
  }
}

TEST(Coordinator, KeyProblemsNameTheirKeys) {
  CoordinatorOptions o;
  o.link.server_key_file = "/nonexistent/coordinator.key_secret";
  try {
    Coordinator c(o);
    FAIL() << "a missing server key was accepted";
  } catch (const CoordinatorError& e) {
    EXPECT_EQ(e.key(), "agents.server_key");
  }
  o.link.server_key_file.clear();
  o.link.allow = "/nonexistent/allow";
  try {
    Coordinator c(o);
    FAIL() << "a missing allowlist was accepted";
  } catch (const CoordinatorError& e) {
    EXPECT_EQ(e.key(), "agents.allow");
  }
  o.link.allow.clear();
  o.link.listen = "tcp://0.0.0.0:0";  // plaintext beyond loopback without the flag
  o.link.insecure_plaintext = false;
  Coordinator authenticated(o);  // fine: CURVE with a fresh key
  authenticated.shutdown();
}

TEST(Coordinator, BindsAPortAndWaitsForWork) {
  CoordinatorOptions o;
  o.scheduler_threads = 1;
  Coordinator c(o);
  EXPECT_EQ(c.endpoint().rfind("tcp://127.0.0.1:", 0), 0u) << c.endpoint();
  EXPECT_NE(c.endpoint(), "tcp://127.0.0.1:0");
  c.start_local_agents();  // none configured
  int polls = 0;
  auto end = c.wait([&] { return ++polls == 3; }, Coordinator::AgentLoss::all);
  EXPECT_EQ(end, Coordinator::WaitEnd::ready);
  EXPECT_EQ(polls, 3);
  EXPECT_FALSE(c.mark_run(1, "finished")) << "no store actor was started";
  c.shutdown();
  c.shutdown();  // idempotent
}

}  // namespace
}  // namespace palladium
