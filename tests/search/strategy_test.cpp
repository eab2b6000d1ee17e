// The guarantees the Strategy base gives every method, checked with a
// deliberately faulty strategy.
#include "search/strategy.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace palladium {
namespace {

// Proposes `per_call` code samples per call, ignoring the budget.
class Greedy final : public Strategy {
 public:
  Greedy(Budget b, int per_call) : Strategy(b), per_call_(per_call) {}
  std::string method() const override { return "greedy"; }
  int reuse_index = -1;  // when set, every proposal reuses this index

 private:
  std::vector<SampleRequest> next_requests(int max_n) override {
    std::vector<SampleRequest> out;
    for (int i = 0; i < per_call_ && i < max_n + extra; ++i) {
      SampleRequest r;
      r.sample_index = reuse_index >= 0 ? reuse_index : next_++;
      out.push_back(r);
    }
    return out;
  }
  void on_observation(const SampleRequest&, const Observation&) override {}
  bool finished() const override { return false; }
  int wanted() const override { return 1; }
  bool can_continue() const override { return budget().remaining() > 0; }
  Phase current_phase() const override { return Phase::iterate; }

 public:
  int extra = 0;  // proposes this many more than max_n

 private:
  int per_call_;
  int next_ = 0;
};

EvalOutcome correct_at(double kernel, double baseline) {
  EvalOutcome o;
  o.verdict = Verdict::correct;
  o.kernel_ms = kernel;
  o.baseline_ms = baseline;
  return o;
}

TEST(StrategyTest, ProposalBeyondBudgetIsRefusedWithoutCharging) {
  Greedy g(Budget(2), 3);
  EXPECT_THROW(g.propose(5), std::logic_error);
  EXPECT_EQ(g.budget().spent(), 0);
  EXPECT_EQ(g.outstanding(), 0);
}

TEST(StrategyTest, ProposalBeyondMaxNIsRefused) {
  Greedy g(Budget(10), 3);
  g.extra = 2;
  EXPECT_THROW(g.propose(1), std::logic_error);
  EXPECT_EQ(g.budget().spent(), 0);
}

TEST(StrategyTest, ReusedSampleIndexIsRefused) {
  Greedy g(Budget(10), 1);
  g.reuse_index = 4;
  ASSERT_EQ(g.propose(1).size(), 1u);
  EXPECT_THROW(g.propose(1), std::logic_error);
  EXPECT_EQ(g.budget().spent(), 1);
}

TEST(StrategyTest, ChargesAndTracksOutstanding) {
  Greedy g(Budget(10), 3);
  auto reqs = g.propose(3);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(g.budget().spent(), 3);
  EXPECT_EQ(g.outstanding(), 3);
  g.observe(1, Observation{"", "x", correct_at(1.0, 2.0)});
  EXPECT_EQ(g.outstanding(), 2);
  EXPECT_THROW(g.observe(1, Observation{"", "x", correct_at(1.0, 2.0)}), std::logic_error);
  EXPECT_THROW(g.propose(-1), std::invalid_argument);
  EXPECT_TRUE(g.propose(0).empty());
  SearchStatus st = g.status();
  EXPECT_EQ(st.candidates, 1);
  EXPECT_EQ(st.correct, 1);
  ASSERT_TRUE(st.best);
  EXPECT_DOUBLE_EQ(st.best->speedup, 2.0);
}

TEST(StrategyTest, BestAfterFollowsSampleIndexOrderNotArrivalOrder) {
  Greedy a(Budget(3), 3), b(Budget(3), 3);
  a.propose(3);
  b.propose(3);
  const EvalOutcome fast = correct_at(1.0, 4.0), slow = correct_at(1.0, 2.0);
  EvalOutcome bad;
  bad.verdict = Verdict::numerics_mismatch;
  a.observe(0, {"", "", slow});
  a.observe(1, {"", "", bad});
  a.observe(2, {"", "", fast});
  b.observe(2, {"", "", fast});
  b.observe(0, {"", "", slow});
  b.observe(1, {"", "", bad});
  EXPECT_EQ(a.status().best_after, (std::vector<double>{2.0, 2.0, 4.0}));
  EXPECT_EQ(b.status().best_after, a.status().best_after);
}

}  // namespace
}  // namespace palladium
