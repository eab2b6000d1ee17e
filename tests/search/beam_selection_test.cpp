// Autocomp's selection rules (autocomp.md §1.4-1.5), one test per rule.
#include "search/beam_selection.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace palladium {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

BeamCandidate root() {
  BeamCandidate c;
  c.id = kRootId;
  c.loss = 1.0;
  return c;
}

BeamCandidate child(int id, int parent, double loss, std::string plan = "",
                    std::optional<double> score = std::nullopt, double parent_loss = 1.0) {
  BeamCandidate c;
  c.id = id;
  c.parent = parent;
  c.parent_loss = parent_loss;
  c.loss = loss;
  c.plan = plan.empty() ? "plan of " + std::to_string(id) : plan;
  c.translation_score = score;
  if (parent != kRootId) c.ancestors = {parent};
  return c;
}

std::vector<int> ids(const std::vector<BeamCandidate>& v) {
  std::vector<int> out;
  for (auto& c : v) out.push_back(c.id);
  return out;
}

SelectionRule optimise_rule(int keep = 4, double kf = 1.0, int dedup = 0) {
  SelectionRule r;
  r.keep = keep;
  r.keep_factor = kf;
  r.dedup_level = dedup;
  return r;
}

TEST(BeamSelectionTest, IncorrectCandidatesAreDroppedBeforeSelection) {
  auto out = select_beam({root(), child(1, kRootId, kInf), child(2, kRootId, 0.5)}, {kRootId},
                         optimise_rule());
  EXPECT_EQ(ids(out), (std::vector<int>{2, kRootId}));
}

TEST(BeamSelectionTest, OptimisationSortsByLossAscendingAndKeepsAtMostB) {
  auto out = select_beam({child(1, kRootId, 0.9), child(2, kRootId, 0.3), child(3, kRootId, 0.6),
                          child(4, kRootId, 0.5)},
                         {}, optimise_rule(3));
  EXPECT_EQ(ids(out), (std::vector<int>{2, 4, 3}));
}

TEST(BeamSelectionTest, IncumbentsComeFirstSoTheyWinTies) {
  // 7 is an incumbent (listed first) and ties with the new 8.
  auto out = select_beam({child(7, kRootId, 0.5), child(8, kRootId, 0.5)}, {7}, optimise_rule(1));
  EXPECT_EQ(ids(out), (std::vector<int>{7}));
}

TEST(BeamSelectionTest, ChildMustBeatParentTimesKeepFactor) {
  // Parent loss 0.5, keep factor 1.0: 0.5 is not < 0.5 and is skipped, 0.49 is kept.
  auto out = select_beam({child(1, 9, 0.5, "", {}, 0.5), child(2, 9, 0.49, "", {}, 0.5)}, {},
                         optimise_rule());
  EXPECT_EQ(ids(out), (std::vector<int>{2}));
  // With 1.1 a child up to 10% slower than its parent survives.
  out = select_beam({child(1, 9, 0.54, "", {}, 0.5), child(2, 9, 0.56, "", {}, 0.5)}, {},
                    optimise_rule(4, 1.1));
  EXPECT_EQ(ids(out), (std::vector<int>{1}));
}

TEST(BeamSelectionTest, IncumbentsAreExemptFromTheKeepFactor) {
  // Incumbent 1 is slower than its own parent (possible after the root
  // re-selection); it stays because it is exempt.
  auto c = child(1, 9, 0.8, "", {}, 0.5);
  EXPECT_EQ(ids(select_beam({c}, {1}, optimise_rule())), (std::vector<int>{1}));
  EXPECT_TRUE(select_beam({c}, {}, optimise_rule()).empty());
}

TEST(BeamSelectionTest, RootIsKeptWithoutParentCheckOrDedup) {
  auto out = select_beam({root(), child(1, kRootId, 2.0)}, {}, optimise_rule());
  // The child (2.0 >= 1.0 * 1.0) fails its parent check; the root has none.
  EXPECT_EQ(ids(out), (std::vector<int>{kRootId}));
}

TEST(BeamSelectionTest, TranslationSortsByScoreDescendingThenLoss) {
  SelectionRule r = optimise_rule();
  r.translation_sort = true;
  auto out = select_beam({child(1, kRootId, 0.2, "a", 6.0), child(2, kRootId, 3.0, "b", 9.0),
                          child(3, kRootId, 2.0, "c", 9.0)},
                         {}, r);
  EXPECT_EQ(ids(out), (std::vector<int>{3, 2, 1}));
}

TEST(BeamSelectionTest, TranslationSortSkipsTheParentCheck) {
  SelectionRule r = optimise_rule();
  r.translation_sort = true;
  // 11.7x slower than the root: kept while translating.
  auto out = select_beam({child(1, kRootId, 11.7, "a", 7.0)}, {}, r);
  EXPECT_EQ(ids(out), (std::vector<int>{1}));
}

TEST(BeamSelectionTest, MissingTranslationScoreSortsAsZero) {
  SelectionRule r = optimise_rule();
  r.translation_sort = true;
  // The root (no score, loss 1.0) sorts below a scored 0.5 but above nothing.
  auto out = select_beam({root(), child(1, kRootId, 5.0, "a", 0.5), child(2, kRootId, 0.1, "b")},
                         {kRootId}, r);
  // Scores: 1 -> 0.5, root -> 0, 2 -> 0; root and 2 tie on 0 and sort by loss.
  EXPECT_EQ(ids(out), (std::vector<int>{1, 2, kRootId}));
}

TEST(BeamSelectionTest, KeepFactorIs1p1UpToAbsoluteGeneration2Then1p0) {
  EXPECT_DOUBLE_EQ(keep_factor_for(1, false, 15.0), 1.1);
  EXPECT_DOUBLE_EQ(keep_factor_for(2, false, 15.0), 1.1);
  EXPECT_DOUBLE_EQ(keep_factor_for(3, false, 15.0), 1.0);
  // Absolute, not relative to the end of translation (Autocomp quirk 1):
  // optimising at generation 4 after 3 translation generations uses 1.0.
  EXPECT_DOUBLE_EQ(keep_factor_for(4, false, 15.0), 1.0);
}

TEST(BeamSelectionTest, KeepFactorWhileTranslatingIsThePerfThreshold) {
  EXPECT_DOUBLE_EQ(keep_factor_for(1, true, 15.0), 15.0);
  // Used when translation sorts by loss (translate_score off): a child 14x
  // slower than its parent survives, 16x does not.
  auto out = select_beam({child(1, kRootId, 14.0), child(2, kRootId, 16.0)}, {},
                         optimise_rule(4, keep_factor_for(1, true, 15.0)));
  EXPECT_EQ(ids(out), (std::vector<int>{1}));
}

TEST(BeamSelectionTest, Dedup0KeepsOneChildPerParentAndPlan) {
  auto out = select_beam({child(1, 5, 0.4, "tile 256", {}, 0.9), child(2, 5, 0.3, "tile 256", {}, 0.9),
                          child(3, 5, 0.5, "fuse", {}, 0.9), child(4, 6, 0.35, "tile 256", {}, 0.9)},
                         {}, optimise_rule(4, 1.0, 0));
  // 2 beats 1 on the same (parent 5, "tile 256"); 4 has another parent.
  EXPECT_EQ(ids(out), (std::vector<int>{2, 4, 3}));
}

TEST(BeamSelectionTest, Dedup1OneChildPerNonRootParent) {
  auto out = select_beam({child(1, 5, 0.4, "a", {}, 0.9), child(2, 5, 0.3, "b", {}, 0.9),
                          child(3, kRootId, 0.5, "c"), child(4, kRootId, 0.6, "d")},
                         {}, optimise_rule(4, 1.0, 1));
  EXPECT_EQ(ids(out), (std::vector<int>{2, 3, 4}));
}

TEST(BeamSelectionTest, Dedup2AlsoRejectsSharedNonRootAncestors) {
  auto a = child(1, 5, 0.4, "a", {}, 0.9);
  a.ancestors = {5, 3};
  auto b = child(2, 6, 0.3, "b", {}, 0.9);
  b.ancestors = {6, 3};  // shares grandparent 3 with a
  auto c = child(7, 8, 0.5, "c", {}, 0.9);
  c.ancestors = {8};
  EXPECT_EQ(ids(select_beam({a, b, c}, {}, optimise_rule(4, 1.0, 2))), (std::vector<int>{2, 7}));
  EXPECT_EQ(ids(select_beam({a, b, c}, {}, optimise_rule(4, 1.0, 0))),
            (std::vector<int>{2, 1, 7}));
}

TEST(BeamSelectionTest, NegativeDedupLevelKeepsDuplicates) {
  auto out = select_beam({child(1, 5, 0.4, "x", {}, 0.9), child(2, 5, 0.3, "x", {}, 0.9)}, {},
                         optimise_rule(4, 1.0, -1));
  EXPECT_EQ(ids(out), (std::vector<int>{2, 1}));
}

TEST(BeamSelectionTest, DedupAppliesToIncumbentsToo) {
  // Exemption covers only the keep factor: an incumbent loses to a faster
  // implementation of its own (parent, plan).
  auto out = select_beam({child(1, 5, 0.4, "x", {}, 0.9), child(2, 5, 0.3, "x", {}, 0.9)}, {1},
                         optimise_rule());
  EXPECT_EQ(ids(out), (std::vector<int>{2}));
}

TEST(BeamSelectionTest, TranslationCompleteNeedsEveryScoredMemberAtTheExitScore) {
  EXPECT_TRUE(translation_complete({child(1, kRootId, 1, "a", 9.0), child(2, kRootId, 1, "b", 9.5)},
                                   9.0));
  EXPECT_FALSE(translation_complete(
      {child(1, kRootId, 1, "a", 9.0), child(2, kRootId, 1, "b", 8.9)}, 9.0));
}

TEST(BeamSelectionTest, TranslationCompleteIgnoresTheUnscoredRoot) {
  EXPECT_TRUE(translation_complete({root(), child(1, kRootId, 1, "a", 9.0)}, 9.0));
  EXPECT_FALSE(translation_complete({root()}, 9.0));  // nothing scored: not complete
}

}  // namespace
}  // namespace palladium
