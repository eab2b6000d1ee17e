#include "search/plausibility.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace palladium {
namespace {

// 8p-like: 918 GFLOP, 0.82 GB: a 1 ms compute floor on v6e.
const WorkloadCost kCost{918e9, 0.82e9};

TEST(Plausibility, SpeedupAboveTheCeilingIsSuspectOnAnyBackend) {
  EXPECT_TRUE(check_timing(11.0, 5.0, "cpu-wall", std::nullopt).suspect);
  EXPECT_TRUE(check_timing(11.0, 5.0, "tpu-profiler", kCost).suspect);
  EXPECT_FALSE(check_timing(9.9, 5.0, "tpu-profiler", kCost).suspect);
  EXPECT_TRUE(check_timing(3.0, 5.0, "cpu-wall", std::nullopt, 2.5).suspect);  // configurable
  auto c = check_timing(12.5, 5.0, "cpu-wall", std::nullopt);
  EXPECT_EQ(c.reason, "speedup 12.50x above the 10x ceiling");
}

TEST(Plausibility, BeatingTheRooflineIsSuspectOnTpuOnly) {
  auto tpu = check_timing(2.0, 0.5, "tpu-profiler", kCost);  // 0.5 ms under a 1 ms floor
  EXPECT_TRUE(tpu.suspect);
  EXPECT_NE(tpu.reason.find("2.00x the v6e compute roofline"), std::string::npos) << tpu.reason;
  EXPECT_TRUE(check_timing(2.0, 0.5, "tpu-wall-fallback", kCost).suspect);
  EXPECT_FALSE(check_timing(2.0, 0.5, "cpu-wall", kCost).suspect);  // CPU: the ceiling only
  EXPECT_FALSE(check_timing(2.0, 1.5, "tpu-profiler", kCost).suspect);
  EXPECT_FALSE(check_timing(2.0, 0.5, "tpu-profiler", std::nullopt).suspect);  // no cost known
}

TEST(Plausibility, ARetimingThatHoldsKeepsTheFirstAndFlagsIt) {
  auto held = resolve_retiming(check_timing(2.0, 0.6, "tpu-profiler", kCost));
  EXPECT_EQ(held.outcome, Plausibility::implausible_speed);
  EXPECT_FALSE(held.publish_second);
  auto replaced = resolve_retiming(check_timing(1.4, 2.0, "tpu-profiler", kCost));
  EXPECT_EQ(replaced.outcome, Plausibility::retimed);
  EXPECT_TRUE(replaced.publish_second);
  EXPECT_STREQ(to_string(Plausibility::implausible_speed), "implausible_speed");
}

TEST(Plausibility, RejectsNonsense) {
  EXPECT_THROW(check_timing(0.0, 1.0, "cpu-wall", std::nullopt), std::invalid_argument);
  EXPECT_THROW(check_timing(2.0, 1.0, "cpu-wall", std::nullopt, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
