#include "cli/status_file.hpp"

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
