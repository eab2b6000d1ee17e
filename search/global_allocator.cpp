#include "search/global_allocator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace palladium {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("GlobalAllocator: " + what);
}

// Candidates since the best speedup last rose (all of them if it never did).
int since_improvement(const SearchStatus& s) {
  const auto& b = s.best_after;
  int last = -1;  // index of the last candidate that raised the best
  double prev = 1.0;
  for (int k = 0; k < static_cast<int>(b.size()); ++k) {
    if (b[static_cast<size_t>(k)] > prev) last = k;
    prev = b[static_cast<size_t>(k)];
  }
  return static_cast<int>(b.size()) - 1 - last;
}

}  // namespace

std::string GlobalAllocator::to_string(Standing s) {
  switch (s) {
    case Standing::done:
      return "done";
    case Standing::hopeless:
      return "hopeless";
    case Standing::saturated:
      return "saturated";
    case Standing::active:
      break;
  }
  return "active";
}

GlobalAllocator::GlobalAllocator(int searches, int per_search_budget,
                                 GlobalAllocatorConfig config)
    : searches_(searches), per_search_(per_search_budget), config_(config) {
  require(searches >= 0, "negative number of searches");
  require(per_search_budget >= 0, "negative per-search budget");
  require(config_.initial_fraction >= 0.0 && config_.initial_fraction <= 1.0,
          "initial_fraction must be in [0, 1]");
  require(config_.hopeless_after >= 0, "hopeless_after must be >= 0");
  require(config_.saturation_window >= 0, "saturation_window must be >= 0");
  require(config_.chunk >= 0, "chunk must be >= 0");
  require(config_.gain_window >= 0, "gain_window must be >= 0");
  require(config_.explore >= 0.0, "explore must be >= 0");
  if (config_.hopeless_after == 0) config_.hopeless_after = std::max(1, per_search_);
  if (config_.saturation_window == 0) config_.saturation_window = std::max(1, per_search_ / 2);
  if (config_.chunk == 0) config_.chunk = std::max(1, per_search_ / 4);
  if (config_.gain_window == 0) config_.gain_window = config_.saturation_window;
  total_ = searches * per_search_budget;
  initial_ = static_cast<int>(std::floor(config_.initial_fraction * per_search_budget + 1e-9));
  pool_ = total_ - initial_ * searches;
  limits_.assign(static_cast<size_t>(searches), initial_);
  closed_.assign(static_cast<size_t>(searches), false);
}

GlobalAllocator::Standing GlobalAllocator::standing(const SearchStatus& s) const {
  if (s.done) return Standing::done;
  if (s.correct == 0 && s.candidates >= config_.hopeless_after) return Standing::hopeless;
  if (s.correct > 0 && since_improvement(s) >= config_.saturation_window) {
    return Standing::saturated;
  }
  return Standing::active;
}

double GlobalAllocator::expected_gain(const SearchStatus& s) const {
  const int n = static_cast<int>(s.best_after.size());
  const double prior = config_.explore / (n + 1);
  if (n == 0) return prior;
  const int w = std::min(config_.gain_window, n);
  const double now = std::log(std::max(1.0, s.best_after[static_cast<size_t>(n - 1)]));
  const double then =
      n - w - 1 >= 0 ? std::log(std::max(1.0, s.best_after[static_cast<size_t>(n - w - 1)])) : 0.0;
  return (now - then) / w + prior;
}

std::vector<GlobalAllocator::Grant> GlobalAllocator::at_epoch(
    const std::vector<SearchStatus>& statuses) {
  require(static_cast<int>(statuses.size()) == searches_,
          "got " + std::to_string(statuses.size()) + " statuses for " +
              std::to_string(searches_) + " searches");
  for (int i = 0; i < searches_; ++i) {
    const SearchStatus& s = statuses[static_cast<size_t>(i)];
    require(s.idle || s.done, "search " + std::to_string(i) + " is neither idle nor done");
    require(s.limit == limits_[static_cast<size_t>(i)],
            "search " + std::to_string(i) + " has limit " + std::to_string(s.limit) +
                ", not the " + std::to_string(limits_[static_cast<size_t>(i)]) + " granted");
    require(s.spent <= s.limit, "search " + std::to_string(i) + " spent beyond its limit");
  }
  ++epochs_;
  std::vector<Grant> grants(static_cast<size_t>(searches_));
  std::vector<int> eligible;
  for (int i = 0; i < searches_; ++i) {
    const SearchStatus& s = statuses[static_cast<size_t>(i)];
    Grant& g = grants[static_cast<size_t>(i)];
    g.search = i;
    pool_ += s.limit - s.spent;  // unspent budget goes back to the pool
    g.limit = s.spent;
    g.open = false;
    g.standing = standing(s);
    if (g.standing == Standing::active && !closed_[static_cast<size_t>(i)]) eligible.push_back(i);
  }
  std::vector<double> gain(static_cast<size_t>(searches_), 0.0);
  for (int i : eligible) gain[static_cast<size_t>(i)] = expected_gain(statuses[static_cast<size_t>(i)]);
  std::stable_sort(eligible.begin(), eligible.end(), [&](int a, int b) {
    return gain[static_cast<size_t>(a)] > gain[static_cast<size_t>(b)];
  });
  for (int i : eligible) {
    const SearchStatus& s = statuses[static_cast<size_t>(i)];
    Grant& g = grants[static_cast<size_t>(i)];
    const int wanted = std::max(1, s.wanted);
    if (pool_ >= wanted) {
      const int grant = std::min(pool_, std::max(wanted, config_.chunk));
      g.limit = s.spent + grant;
      g.open = true;
      pool_ -= grant;
    } else {
      // The last of the pool: a closed budget, so the search spends it on a
      // truncated step instead of waiting for budget that will never come.
      g.limit = s.spent + pool_;
      pool_ = 0;
    }
  }
  for (int i = 0; i < searches_; ++i) {
    const Grant& g = grants[static_cast<size_t>(i)];
    limits_[static_cast<size_t>(i)] = g.limit;
    if (!g.open) closed_[static_cast<size_t>(i)] = true;
  }
  return grants;
}

}  // namespace palladium
