// The coordinator section's request timeouts: their defaults, how they are set, and the errors
// that name a bad one. How run_setup hands them to the actors: tests/cli/run_setup_test.cpp.
#include "config/coordinator_config.hpp"

#include <gtest/gtest.h>

#include "config/run_config.hpp"
#include "tests/config/config_error.hpp"

namespace palladium {
namespace {

const char* const kHead = "name: q\nworkloads: [8p]\n";

TEST(CoordinatorConfig, TimeoutsHaveDefaultsAndCanBeSet) {
  auto absent = parse_run_config(kHead, "t.yaml");
  EXPECT_EQ(absent.coordinator.store_timeout_s, 120);
  EXPECT_EQ(absent.coordinator.llm_timeout_s, 3600);
  EXPECT_EQ(absent.coordinator.run_timeout_s, 7 * 24 * 3600);
  EXPECT_EQ(absent.coordinator.status_timeout_s, 5);
  auto set = parse_run_config(std::string(kHead) +
                                  "coordinator:\n  timeouts: {store_s: 7, llm_s: 60, run_s: 3600, "
                                  "status_s: 2}\n",
                              "t.yaml");
  EXPECT_EQ(set.coordinator.store_timeout_s, 7);
  EXPECT_EQ(set.coordinator.llm_timeout_s, 60);
  EXPECT_EQ(set.coordinator.run_timeout_s, 3600);
  EXPECT_EQ(set.coordinator.status_timeout_s, 2);
}

TEST(CoordinatorConfig, ABadTimeoutNamesTheFileAndTheKey) {
  using testing::config_error_of;
  EXPECT_NE(config_error_of(std::string(kHead) + "coordinator: {timeouts: {llm_s: 0}}\n")
                .find("test.yaml: coordinator.timeouts.llm_s"),
            std::string::npos);
  EXPECT_NE(config_error_of(std::string(kHead) + "coordinator: {timeouts: {store_s: 1.5}}\n")
                .find("coordinator.timeouts.store_s"),
            std::string::npos);
  EXPECT_NE(config_error_of(std::string(kHead) + "coordinator: {timeouts: {llm: 60}}\n")
                .find("coordinator.timeouts.llm: unknown key"),
            std::string::npos);
  EXPECT_NE(config_error_of(std::string(kHead) + "coordinator: {timeouts: 60}\n")
                .find("coordinator.timeouts: expected a mapping"),
            std::string::npos);
}

}  // namespace
}  // namespace palladium
