// The offline "synthetic" model: answers every kind of prompt the search
// methods send (ChatRequest::role code, plan, score, repair, menu) with real
// text, so every method and policy runs end to end with no API and no key.
//
// Code answers come from the workload's kernel family (synthetic_family.hpp):
// real modules that really run, several correct tilings of different speeds
// and the same tilings with slips in them. What it answers depends on the
// prompt, the way a model's answers do:
//   - the context blocks present (context_blocks_in(), system and user
//     prompt): each block makes some kinds of slip rarer (kSlipRates below);
//   - the parent: the last ```python block in the user prompt that is one of
//     its own family's modules. A failed parent (a "Verdict: <not correct>"
//     line, or role repair) is repaired: each of its slips is fixed with a
//     probability that grows with the context. A correct parent is optimised:
//     one tile parameter moves to a neighbouring value (or the layout
//     changes), which may be faster or slower; new slips are rarer than in a
//     first attempt;
//   - a plan it wrote earlier, quoted in the prompt ("Tiling after this
//     change: ..."), is followed;
//   - no parent: a first translation, from the template weights and the
//     parameters' `first` values; sometimes a question instead of code.
// Plan answers pick one of the strategies listed in the prompt (the first
// list after a line mentioning strategies) and name a concrete tiling. Score
// answers rate translation completeness from the code (translation_score())
// and end with "SCORE: <n>". Menu answers list strategies one per line.
//
// Deterministic: the answer is a function of (seed, sample_index, role,
// system prompt, user prompt) and the files. Token counts are estimates
// (estimate_tokens of the prompt and of the answer).
//
// A workload without a family gets an answer without code that says so.
//
// Not thread-safe (families are loaded on first use and cached); one owner.

#ifndef PALLADIUM_LLM_SYNTHETIC_MODEL_HPP_
#define PALLADIUM_LLM_SYNTHETIC_MODEL_HPP_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/provider.hpp"
#include "llm/synthetic_family.hpp"

namespace palladium {

// Probability of each kind of slip in a first attempt, and the factor each
// context block applies to it when present (block order: hardware, api,
// examples, rules). `question` is answering with a question and no code.
struct SlipRates {
  double question, api, tiling, logic, loop;
};
struct SlipFactors {
  SlipRates hardware, api, examples, rules;
};

struct SyntheticAnswer {
  std::string text;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  // What was written, for tests and the calibration: the code's variant
  // (nullopt when the answer has no code of the family).
  std::optional<Variant> variant;
};

// 0..10: how much of the work runs inside Pallas kernels. 0 for no code, 1
// for code without pallas_call, 10 when no compute op runs outside kernel
// functions (functions with *_ref parameters and what they contain), minus 2
// per compute op outside them, at least 3.
int translation_score(std::string_view code);

class SyntheticModel {
 public:
  explicit SyntheticModel(std::filesystem::path synthetic_dir);

  // Throws ProviderError (not retryable) if a family's files are broken.
  SyntheticAnswer answer(const ChatRequest& request);

  // The family of `workload_id`, or nullptr when it has none. Throws
  // ProviderError for broken family files.
  const KernelFamily* family(const std::string& workload_id);

  static const SlipRates& base_rates();
  static const SlipFactors& block_factors();

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::unique_ptr<KernelFamily>> families_;  // null: none
};

// The strategies listed in a plan or menu prompt: the items ("1. x", "- x",
// "* x") of the first list after a line that mentions strategies, outside
// code fences; all list items outside fences if no line mentions them.
std::vector<std::string> strategies_in(std::string_view prompt);

}  // namespace palladium

#endif  // PALLADIUM_LLM_SYNTHETIC_MODEL_HPP_
