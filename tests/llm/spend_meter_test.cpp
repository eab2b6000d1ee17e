#include "llm/spend_meter.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(SpendMeterTest, CommittedIsRealisedPlusInFlight) {
  SpendMeter m(1.0);
  EXPECT_TRUE(m.fits(0.6));
  m.commit(1, 0.6);
  EXPECT_FALSE(m.fits(0.5));  // 0.6 in flight + 0.5 > 1.0
  EXPECT_TRUE(m.fits(0.4));
  m.settle(1, 0.1);  // the call cost far less than its worst case
  EXPECT_DOUBLE_EQ(m.realised(), 0.1);
  EXPECT_DOUBLE_EQ(m.in_flight(), 0.0);
  EXPECT_TRUE(m.fits(0.9));
  EXPECT_FALSE(m.fits(0.91));
}

TEST(SpendMeterTest, NoCapFitsEverything) {
  SpendMeter m(std::nullopt);
  EXPECT_TRUE(m.fits(1e9));
}

TEST(SpendMeterTest, AResumedRunCountsWhatItSpentBefore) {
  SpendMeter m(1.0, 0.95);
  EXPECT_FALSE(m.fits(0.06));
  EXPECT_TRUE(m.fits(0.05));
}

}  // namespace
}  // namespace palladium
