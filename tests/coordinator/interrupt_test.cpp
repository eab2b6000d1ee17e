#include "coordinator/interrupt.hpp"

#include <csignal>

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(Interrupt, ASignalIsRecordedNotFatal) {
  install_interrupt_handlers();
  clear_interrupt();
  EXPECT_EQ(interrupt_signal(), 0);
  std::raise(SIGTERM);
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  std::raise(SIGTERM == SIGINT ? SIGHUP : SIGINT);
  EXPECT_EQ(interrupt_signal(), SIGTERM) << "the first signal is the one reported";
  clear_interrupt();
}

TEST(Interrupt, ASecondSignalOfTheSameKindKillsTheDefaultWay) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::exit(0);
      },
      testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
}  // namespace palladium
