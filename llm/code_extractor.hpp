// Pulls the candidate module out of an LLM response.
//
// Rules, in order:
//   0. thinking is set aside: text inside <think>...</think> (also <thinking>, <reasoning>;
//      case-insensitive; an unclosed tag runs to the end, as when the answer was cut off
//      mid-thought) is only searched when the rest of the response has no code;
//   1. among the fenced blocks that define `workload` (a line "def workload(" or
//      "workload = "), the last one that was closed; if none was closed, the last one. A
//      final answer usually follows its drafts, and a closed block beats one cut off by the
//      token limit;
//   2. otherwise the body of the first fenced block whose info string is python, py or
//      python3 (case-insensitive);
//   3. otherwise the body of the first fenced block of any kind;
//   4. otherwise "" (the response has no code; the verdict is no_code).
//
// A fence is a line of optional spaces/tabs then three or more backticks;
// the block ends at a line of optional whitespace and at least as many
// backticks, or at the end of the response when the fence is never closed
// (a truncated answer still yields its code). CRLF and lone CR line endings
// become LF. If the opening fence is indented, up to that much leading
// whitespace is removed from each body line, so Python indentation survives
// fences nested in markdown lists. Blocks whose body is only whitespace are
// skipped. The result ends with a newline unless it is empty.

#ifndef PALLADIUM_LLM_CODE_EXTRACTOR_HPP_
#define PALLADIUM_LLM_CODE_EXTRACTOR_HPP_

#include <string>
#include <string_view>

namespace palladium {

std::string extract_code(std::string_view response);

}  // namespace palladium

#endif  // PALLADIUM_LLM_CODE_EXTRACTOR_HPP_
