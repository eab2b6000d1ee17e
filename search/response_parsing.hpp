// Reading what the LLM answered to a plan, score or menu prompt, and the
// strategy menus shipped under workloads/context/menus/. The formats are
// documented for the model (and for the synthetic model's author) in
// docs/prompts.md; these are their parsers. Pure functions, never throw.

#ifndef PALLADIUM_SEARCH_RESPONSE_PARSING_HPP_
#define PALLADIUM_SEARCH_RESPONSE_PARSING_HPP_

#include <string>
#include <string_view>
#include <vector>

namespace palladium {

// The items of a strategy list: every line whose first non-blank characters
// are "- " or "* " (or a number then ". " or ") "), the marker and
// surrounding blanks removed, in order; empty items skipped. If the text has
// a <strategies> ... </strategies> section, only lines inside it count (an
// unclosed section runs to the end). Lines starting with '#' are comments.
// Used for the menu files and for menu responses.
std::vector<std::string> parse_strategy_list(std::string_view text);

// A plan response's plan: the text after the last "</think>",
// "</budget:thinking>" or "</planning>" marker (Autocomp's extract_plan),
// trimmed; at most kMaxPlanChars, cut in the middle.
std::string extract_plan(std::string_view response);
inline constexpr size_t kMaxPlanChars = 6000;

// A score response's translation-completeness score in [0, 10]: the number
// after the first "SCORE:" (case-insensitive, blanks allowed); failing that,
// the response's first token if it is a number (Autocomp's float(first
// token)); failing that 0. Clamped to [0, 10]; NaN is 0.
double parse_translation_score(std::string_view response);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_RESPONSE_PARSING_HPP_
