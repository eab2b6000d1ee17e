// The coordinator section's request timeouts: their defaults (those of RequestTimeouts), how
// they are set, the errors that name a bad one, and how run_setup hands them to the actors.
#include "cli/config/coordinator_config.hpp"

#include <gtest/gtest.h>

#include "actors/request_timeouts.hpp"
#include "cli/run_config.hpp"
#include "cli/run_setup.hpp"
#include "tests/cli/config_error.hpp"

namespace palladium {
namespace {

const char* const kHead = "name: q\nworkloads: [8p]\n";

TEST(CoordinatorConfig, TimeoutsDefaultToTheActorsDefaultsAndReachThePlan) {
  auto absent = parse_run_config(kHead, "t.yaml");
  RequestTimeouts defaults;
  RequestTimeouts got = request_timeouts(absent.coordinator);
  EXPECT_EQ(got.store, defaults.store);
  EXPECT_EQ(got.llm, defaults.llm);
  EXPECT_EQ(got.run, defaults.run);
  EXPECT_EQ(got.status, defaults.status);

  auto set = parse_run_config(std::string(kHead) +
                                  "coordinator:\n  timeouts: {store_s: 7, llm_s: 60, run_s: 3600, "
                                  "status_s: 2}\n",
                              "t.yaml");
  RunPlan plan = run_plan(set, 1, {}, false);
  EXPECT_EQ(plan.timeouts.store, std::chrono::seconds(7));
  EXPECT_EQ(plan.timeouts.llm, std::chrono::seconds(60));
  EXPECT_EQ(plan.timeouts.run, std::chrono::seconds(3600));
  EXPECT_EQ(plan.timeouts.status, std::chrono::seconds(2));
  EXPECT_EQ(coordinator_options(set, "logs").timeouts.store, std::chrono::seconds(7))
      << "the gateways' store waits";
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
