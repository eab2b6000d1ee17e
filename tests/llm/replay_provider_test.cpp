#include "llm/replay_provider.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

namespace palladium {
namespace {

namespace fs = std::filesystem;

// A throwaway corpus: <tmp>/8p/r0.md .. r4.md with text "response i", plus a
// non-.md file that must be ignored.
class ReplayProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("palladium_replay_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "8p");
    for (int i = 0; i < kFiles; ++i) {
      std::ofstream(dir_ / "8p" / ("r" + std::to_string(i) + ".md"))
          << "response " << i;
    }
    std::ofstream(dir_ / "8p" / "README.txt") << "not a response";
  }
  void TearDown() override { fs::remove_all(dir_); }

  ChatRequest request(int sample_index, uint64_t seed) const {
    ChatRequest r;
    r.workload_id = "8p";
    r.sample_index = sample_index;
    r.seed = seed;
    r.system_prompt = "sys";      // 3 chars
    r.user_prompt = "user text";  // 9 chars
    return r;
  }

  static constexpr int kFiles = 5;
  fs::path dir_;
};

TEST_F(ReplayProviderTest, IsDeterministicAcrossProviders) {
  auto a = make_replay_provider(dir_);
  auto b = make_replay_provider(dir_);
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(a->complete(request(k, 7)).text, b->complete(request(k, 7)).text);
  }
}

TEST_F(ReplayProviderTest, ServesEachFileOncePerCycle) {
  auto p = make_replay_provider(dir_);
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::set<std::string> seen;
    for (int k = 0; k < kFiles; ++k) {
      seen.insert(p->complete(request(cycle * kFiles + k, 1)).text);
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(kFiles)) << "cycle " << cycle;
    EXPECT_EQ(seen.count("not a response"), 0u);
  }
  // The cycle repeats: sample k and k + n get the same file.
  EXPECT_EQ(p->complete(request(2, 1)).text,
            p->complete(request(2 + kFiles, 1)).text);
}

TEST_F(ReplayProviderTest, DifferentSeedsGiveDifferentOrders) {
  auto p = make_replay_provider(dir_);
  auto order = [&](uint64_t seed) {
    std::vector<std::string> out;
    for (int k = 0; k < kFiles; ++k) out.push_back(p->complete(request(k, seed)).text);
    return out;
  };
  // 5! = 120 orders; a few seeds cannot all agree unless the seed is unused.
  std::set<std::vector<std::string>> orders;
  for (uint64_t seed = 0; seed < 6; ++seed) orders.insert(order(seed));
  EXPECT_GT(orders.size(), 1u);
}

TEST_F(ReplayProviderTest, PermutationIsPortable) {
  // Golden values, computed independently by a Python transcription of the
  // documented algorithm (FNV-1a seed, splitmix64, Fisher-Yates). They never
  // change across compilers or standard libraries.
  const auto perm = replay_permutation("8p", 0, 5);
  std::vector<size_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(perm, (std::vector<size_t>{3, 2, 0, 1, 4}));
  EXPECT_EQ(replay_permutation("8p", 1, 5),
            (std::vector<size_t>{2, 1, 0, 3, 4}));
  EXPECT_EQ(replay_permutation("8p", 7, 5),
            (std::vector<size_t>{3, 1, 2, 4, 0}));
  EXPECT_TRUE(replay_permutation("8p", 0, 0).empty());
  EXPECT_EQ(replay_permutation("8p", 0, 1), (std::vector<size_t>{0}));
}

TEST_F(ReplayProviderTest, ResponseFieldsAreEstimated) {
  auto p = make_replay_provider(dir_);
  const ChatResponse r = p->complete(request(0, 0));
  EXPECT_EQ(r.model, "replay");
  EXPECT_TRUE(r.tokens_estimated);
  EXPECT_EQ(r.prompt_tokens, 3);  // ceil(12 / 4)
  EXPECT_EQ(r.completion_tokens,
            static_cast<int>((r.text.size() + 3) / 4));  // "response i": 3
  EXPECT_EQ(r.completion_tokens, 3);
  EXPECT_GE(r.latency_ms, 0.0);
  EXPECT_EQ(p->name(), "replay");
}

TEST_F(ReplayProviderTest, MissingWorkloadDirNamesThePath) {
  auto p = make_replay_provider(dir_);
  ChatRequest r = request(0, 0);
  r.workload_id = "99p";
  try {
    p->complete(r);
    FAIL() << "no error for a missing workload";
  } catch (const ProviderError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find((dir_ / "99p").string()),
              std::string::npos)
        << e.what();
  }
  r.workload_id = "../8p";
  EXPECT_THROW(p->complete(r), ProviderError);
}

TEST_F(ReplayProviderTest, EmptyWorkloadDirIsAnError) {
  fs::create_directories(dir_ / "12p");
  auto p = make_replay_provider(dir_);
  ChatRequest r = request(0, 0);
  r.workload_id = "12p";
  EXPECT_THROW(p->complete(r), ProviderError);
}

}  // namespace
}  // namespace palladium
