#include "coordinator/status_file.hpp"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(StatusFile, RoundTripsAndIsLiveOnlyWhileFreshAndItsWriterRuns) {
  auto path = std::filesystem::temp_directory_path() /
              ("palladium-status-" + std::to_string(getpid()) + ".json");
  CoordinatorStatus s;
  s.pid = getpid();
  s.updated_unix_ms = 1000000;
  s.command = "sweep";
  s.agents = 3;
  s.slots = 6;
  s.queued = 4;
  s.in_flight = 5;
  s.running_runs = {2, 7};
  s.sample_cap = 80;
  s.usd_cap = 12.5;
  s.llm_in_flight = 8;
  s.llm_queued = 13;
  s.llm_committed_usd = 1.25;
  s.llm_stopped = "dollar cap";
  write_status_file(path, s);
  auto back = read_status_file(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->agents, 3);
  EXPECT_EQ(back->llm_in_flight, 8);
  EXPECT_EQ(back->llm_queued, 13);
  EXPECT_EQ(back->llm_committed_usd, 1.25);
  EXPECT_EQ(back->llm_stopped, "dollar cap");
  EXPECT_EQ(back->slots, 6);
  EXPECT_EQ(back->running_runs, (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(back->usd_cap, 12.5);
  EXPECT_TRUE(status_is_live(*back, 1000000 + 4000));
  EXPECT_FALSE(status_is_live(*back, 1000000 + 6000)) << "stale";
  back->pid = 0x7ffffff0;  // no such process
  EXPECT_FALSE(status_is_live(*back, 1000000));

  std::ofstream(path) << "{\"version\": 1, \"pid\": ";
  EXPECT_FALSE(read_status_file(path)) << "a torn or foreign file is no status";
  std::filesystem::remove(path);
  EXPECT_FALSE(read_status_file(path));
}

TEST(StatusFile, UnknownCountsStayUnknown) {
  auto path = std::filesystem::temp_directory_path() /
              ("palladium-status2-" + std::to_string(getpid()) + ".json");
  CoordinatorStatus s;
  s.pid = getpid();
  s.command = "run";
  write_status_file(path, s);
  auto back = read_status_file(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->slots, -1);
  EXPECT_EQ(back->llm_in_flight, -1);
  EXPECT_FALSE(back->usd_cap);
  std::filesystem::remove(path);
}

TEST(StatusFile, AFileWithoutTheLlmPartStillReads) {
  // Written by a coordinator from before the LLM counts were reported.
  auto path = std::filesystem::temp_directory_path() /
              ("palladium-status3-" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"version": 1, "pid": 5, "updated_unix_ms": 7, "command": "sweep",
    "dispatcher": {"agents": 1, "slots": 2, "queued": 0, "in_flight": 1},
    "running_runs": [1], "sample_cap": 4, "usd_cap": null})";
  auto back = read_status_file(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->in_flight, 1);
  EXPECT_EQ(back->llm_in_flight, -1);
  EXPECT_EQ(back->llm_stopped, "");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace palladium

namespace palladium {
namespace {

CoordinatorStatus busy(int64_t slots, int64_t in_flight, int64_t queued, int64_t llm_in_flight,
                       int64_t llm_queued, std::string holding) {
  CoordinatorStatus s;
  s.agents = 2;
  s.slots = slots;
  s.in_flight = in_flight;
  s.queued = queued;
  s.llm_in_flight = llm_in_flight;
  s.llm_queued = llm_queued;
  s.llm_holding = std::move(holding);
  return s;
}

TEST(BindingLimitNow, NamesTheGatewaysLimitTheAgentsOrTheWaitForCode) {
  EXPECT_EQ(binding_limit_now(busy(4, 4, 0, 8, 30, "requests/min")),
            "the LLM gateway: 30 samples wait on its requests/min limit (raise "
            "llm.requests_per_minute)");
  EXPECT_EQ(binding_limit_now(busy(4, 4, 12, 2, 0, "")),
            "the TPU agents: all 4 slots busy, 12 candidates queued (more agents or chips)");
  EXPECT_NE(binding_limit_now(busy(4, 1, 0, 6, 0, "")).find("agents idle waiting for code (3 of 4 "
                                                           "slots free while 6 samples"),
            std::string::npos);
  EXPECT_EQ(binding_limit_now(busy(4, 0, 0, 0, 0, "")), "");  // nothing waits
  // The holding limit survives the status file.
  auto path = std::filesystem::temp_directory_path() /
              ("palladium-binding-" + std::to_string(getpid()) + ".json");
  CoordinatorStatus s = busy(4, 4, 0, 8, 30, "spend window");
  s.pid = getpid();
  write_status_file(path, s);
  EXPECT_EQ(read_status_file(path)->llm_holding, "spend window");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace palladium
