// The verdict taxonomy: the one outcome every evaluated candidate gets.
//
// The enum, its spellings and its order come from protocol/taxonomy.json, the
// single source that C++ (generated protocol/taxonomy.hpp) and Python
// (protocol/taxonomy.py) share; the string spelling is the wire, pipe and
// database spelling (docs/architecture.md). Add a verdict there.
//
// Roughly in pipeline order: the earliest stage that can produce a verdict
// comes first. `correct` is the only success.
//
//   std::string_view to_string(Verdict v);              never empty
//   std::optional<Verdict> verdict_from_string(text);   exact match or nullopt
//   const std::vector<Verdict>& all_verdicts();         declaration order

#ifndef PALLADIUM_SEARCH_VERDICT_HPP_
#define PALLADIUM_SEARCH_VERDICT_HPP_

#include "protocol/taxonomy.hpp"

#endif  // PALLADIUM_SEARCH_VERDICT_HPP_
