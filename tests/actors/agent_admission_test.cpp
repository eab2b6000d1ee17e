// HELLO validation and flood limits with a fake clock.
#include "actors/agent_admission.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

using namespace std::chrono_literals;
using TP = AgentAdmission::TimePoint;

wire::Hello good() {
  wire::Hello h;
  h.agent_id = "host-1";
  h.backend = "interpret";
  h.device_kind = "cpu";
  h.jax_version = "0.10.2";
  h.slots = 2;
  h.stages = {"lint", "import", "numerics"};
  return h;
}

std::string why(const wire::Hello& h) { return AgentAdmission::validate(h, 64, nullptr); }

TEST(AgentAdmissionTest, AGoodHelloGivesItsCapabilities) {
  Capabilities caps;
  EXPECT_EQ(AgentAdmission::validate(good(), 64, &caps), "");
  EXPECT_EQ(caps.backend, "interpret");
  EXPECT_EQ(caps.stages, stage_bit(Stage::lint) | stage_bit(Stage::import) |
                             stage_bit(Stage::numerics));
}

TEST(AgentAdmissionTest, EachBadFieldIsNamed) {
  auto with = [](auto change) {
    wire::Hello h = good();
    change(h);
    return why(h);
  };
  EXPECT_NE(with([](auto& h) { h.slots = 2147483647; }).find("slots 2147483647"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.slots = 0; }).find("slots 0"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.backend = "gpu"; }).find("backend"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.device_kind = "TPU v6"; }).find("want cpu"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.agent_id = std::string(300, 'a'); }).find("agent_id is 300"),
            std::string::npos);
  EXPECT_NE(with([](auto& h) { h.jax_version = "0.10\n2"; }).find("non-printable"),
            std::string::npos);
  EXPECT_NE(with([](auto& h) { h.jax_version = ""; }).find("jax_version is empty"),
            std::string::npos);
  EXPECT_NE(with([](auto& h) { h.stages = {}; }).find("stages is empty"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.stages = {"lint", "lint"}; }).find("twice"), std::string::npos);
  EXPECT_NE(with([](auto& h) { h.stages = {"lint", "warp"}; }).find("unknown stage \"warp\""),
            std::string::npos);
  wire::Hello tpu = good();
  tpu.backend = "tpu";
  EXPECT_NE(why(tpu).find("device_kind cpu with backend tpu"), std::string::npos);
  tpu.device_kind = "TPU v6 lite";
  EXPECT_EQ(why(tpu), "");
}

TEST(AgentAdmissionTest, NewRegistrationsSpendATokenBucket) {
  AgentAdmission::Options o;
  o.registration_burst = 3;
  o.registrations_per_s = 2;
  AgentAdmission a(o);
  TP t0 = TP{} + 1h;
  int admitted = 0;
  for (int i = 0; i < 10; ++i)
    admitted += a.admit("k" + std::to_string(i), "10.0.0.1", false, good(), t0).admitted;
  EXPECT_EQ(admitted, 3);
  auto refused = a.admit("k99", "10.0.0.1", false, good(), t0);
  EXPECT_NE(refused.reason.find("rate limit"), std::string::npos) << refused.reason;
  EXPECT_TRUE(a.admit("k10", "10.0.0.1", false, good(), t0 + 500ms).admitted) << "refilled 1";
  EXPECT_FALSE(a.admit("k11", "10.0.0.1", false, good(), t0 + 600ms).admitted);
}

TEST(AgentAdmissionTest, OneIdentityMayNotReRegisterWithoutEnd) {
  AgentAdmission::Options o;
  o.rehello_limit = 3;
  o.rehello_window = 10s;
  AgentAdmission a(o);
  TP t0 = TP{} + 1h;
  ASSERT_TRUE(a.admit("k", "h", false, good(), t0).admitted);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(a.admit("k", "h", true, good(), t0 + 1s).admitted);
  EXPECT_FALSE(a.admit("k", "h", true, good(), t0 + 2s).admitted);
  EXPECT_TRUE(a.admit("k", "h", true, good(), t0 + 12s).admitted) << "the window moved on";
}

TEST(AgentAdmissionTest, PlaintextAgentsPerAddressAreCapped) {
  AgentAdmission::Options o;
  o.max_agents_per_address = 2;
  AgentAdmission a(o);
  TP t0 = TP{} + 1h;
  EXPECT_TRUE(a.admit("r1", "10.0.0.9", false, good(), t0).admitted);
  EXPECT_TRUE(a.admit("r2", "10.0.0.9", false, good(), t0).admitted);
  EXPECT_FALSE(a.admit("r3", "10.0.0.9", false, good(), t0).admitted);
  EXPECT_TRUE(a.admit("r4", "10.0.0.10", false, good(), t0).admitted);
  a.forget("r1");
  EXPECT_TRUE(a.admit("r3", "10.0.0.9", false, good(), t0).admitted) << "a slot was freed";
}

}  // namespace
}  // namespace palladium
