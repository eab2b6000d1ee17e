#include "search/beam_selection.hpp"

#include <algorithm>
#include <cmath>

namespace palladium {

double keep_factor_for(int generation, bool translating, double translate_perf_threshold,
                       double early_keep_factor, int early_generations, double keep_factor) {
  if (translating) return translate_perf_threshold;
  return generation <= early_generations ? early_keep_factor : keep_factor;
}

bool dedup_conflicts(const BeamCandidate& c, const std::vector<BeamCandidate>& kept,
                     int dedup_level) {
  if (dedup_level < 0) return false;
  for (const auto& k : kept) {
    if (!k.parent) continue;  // the root conflicts with nothing
    const bool same_parent = k.parent == c.parent;
    if (dedup_level == 1) {
      if (same_parent && *c.parent != kRootId) return true;
      continue;
    }
    if (same_parent && k.plan == c.plan) return true;
    if (dedup_level >= 2) {
      for (int a : c.ancestors) {
        if (std::find(k.ancestors.begin(), k.ancestors.end(), a) != k.ancestors.end()) return true;
      }
    }
  }
  return false;
}

std::vector<BeamCandidate> select_beam(const std::vector<BeamCandidate>& candidates,
                                       const std::set<int>& exempt, const SelectionRule& rule) {
  std::vector<BeamCandidate> sorted;
  for (const auto& c : candidates) {
    if (!std::isinf(c.loss)) sorted.push_back(c);
  }
  if (rule.translation_sort) {
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const BeamCandidate& a, const BeamCandidate& b) {
                       const double sa = a.translation_score.value_or(0.0);
                       const double sb = b.translation_score.value_or(0.0);
                       if (sa != sb) return sa > sb;
                       return a.loss < b.loss;
                     });
  } else {
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const BeamCandidate& a, const BeamCandidate& b) { return a.loss < b.loss; });
  }
  std::vector<BeamCandidate> out;
  for (const auto& c : sorted) {
    if (static_cast<int>(out.size()) >= rule.keep) break;
    if (!c.parent) {
      out.push_back(c);
      continue;
    }
    if (!rule.translation_sort && exempt.count(c.id) == 0 &&
        c.loss >= c.parent_loss * rule.keep_factor) {
      continue;
    }
    if (dedup_conflicts(c, out, rule.dedup_level)) continue;
    out.push_back(c);
  }
  return out;
}

bool translation_complete(const std::vector<BeamCandidate>& beam, double exit_score) {
  bool any = false;
  for (const auto& c : beam) {
    if (!c.translation_score) continue;
    any = true;
    if (*c.translation_score < exit_score) return false;
  }
  return any;
}

}  // namespace palladium
