#include "search/verdict.hpp"

#include <array>
#include <utility>

namespace palladium {

namespace {

// One row per enumerator, in declaration order; verdict_test checks that the
// table and the enum agree.
constexpr std::array<std::pair<Verdict, std::string_view>, 15> kNames = {{
    {Verdict::no_code, "no_code"},
    {Verdict::syntax_error, "syntax_error"},
    {Verdict::lint_rejected, "lint_rejected"},
    {Verdict::import_error, "import_error"},
    {Verdict::api_misuse, "api_misuse"},
    {Verdict::lowering_error, "lowering_error"},
    {Verdict::compile_error, "compile_error"},
    {Verdict::runtime_error, "runtime_error"},
    {Verdict::timeout, "timeout"},
    {Verdict::crash, "crash"},
    {Verdict::resource_exhausted, "resource_exhausted"},
    {Verdict::shape_mismatch, "shape_mismatch"},
    {Verdict::numerics_mismatch, "numerics_mismatch"},
    {Verdict::no_pallas, "no_pallas"},
    {Verdict::correct, "correct"},
}};

}  // namespace

std::string_view to_string(Verdict v) {
  for (const auto& [verdict, name] : kNames) {
    if (verdict == v) return name;
  }
  // Only reachable through a cast from an out-of-range integer.
  return "invalid_verdict";
}

std::optional<Verdict> verdict_from_string(std::string_view text) {
  for (const auto& [verdict, name] : kNames) {
    if (name == text) return verdict;
  }
  return std::nullopt;
}

const std::vector<Verdict>& all_verdicts() {
  static const std::vector<Verdict> kAll = [] {
    std::vector<Verdict> all;
    for (const auto& row : kNames) all.push_back(row.first);
    return all;
  }();
  return kAll;
}

}  // namespace palladium
