// The one token estimate used where no tokenizer or API usage count is at
// hand: ceil(bytes / 4). English prose and Python code both average about 4
// bytes per token in the GPT and Gemini tokenizers; the estimate is marked as
// such wherever it is stored (ChatResponse::tokens_estimated) or printed.

#ifndef PALLADIUM_LLM_TOKEN_ESTIMATE_HPP_
#define PALLADIUM_LLM_TOKEN_ESTIMATE_HPP_

#include <cstddef>

namespace palladium {

inline int estimate_tokens(size_t bytes) {
  return static_cast<int>((bytes + 3) / 4);
}

}  // namespace palladium

#endif  // PALLADIUM_LLM_TOKEN_ESTIMATE_HPP_
