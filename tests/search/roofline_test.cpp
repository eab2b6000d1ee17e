#include "search/roofline.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(Roofline, ComputeBoundKernelAgainstTheMxuPeak) {
  // 918 GFLOP take 1 ms at 918 TFLOP/s; 0.82 GB take 0.5 ms at 1.64 TB/s.
  auto p = roofline_fraction({918e9, 0.82e9}, 4.0);
  EXPECT_EQ(p.bound, "compute");
  EXPECT_DOUBLE_EQ(p.floor_ms, 1.0);
  EXPECT_DOUBLE_EQ(p.fraction, 0.25);
}

TEST(Roofline, MemoryBoundKernelFasterThanTheRoofIsAboveOne) {
  auto p = roofline_fraction({1e9, 1.64e9}, 0.5);  // 1 GFLOP ~ 1 us; 1.64 GB = 1 ms
  EXPECT_EQ(p.bound, "memory");
  EXPECT_NEAR(p.floor_ms, 1.0, 1e-12);
  EXPECT_NEAR(p.fraction, 2.0, 1e-12);  // impossible: what the plausibility gate looks for
}

TEST(Roofline, OtherPeaks) {
  // 10 FLOPs at 10 FLOP/s: 1 s; 10 bytes at 1 byte/s: 10 s, the binding roof.
  auto p = roofline_fraction({10.0, 10.0}, 20000.0, {"toy", 10.0, 1.0});
  EXPECT_EQ(p.bound, "memory");
  EXPECT_DOUBLE_EQ(p.floor_ms, 10000.0);
  EXPECT_DOUBLE_EQ(p.fraction, 0.5);
}

TEST(Roofline, RejectsNoTimeAndNoWork) {
  EXPECT_THROW(roofline_fraction({1.0, 1.0}, 0.0), std::invalid_argument);
  EXPECT_THROW(roofline_fraction({0.0, 0.0}, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace palladium
