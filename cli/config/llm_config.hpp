// The llm section of a run config: who writes the candidates, and how the gateway may call.
//
// YAML (every key optional; defaults shown):
//   llm:
//     provider: replay            # replay: the offline recorded responses (llm.corpus)
//                                 # hand_tuned: each workload's hand-tuned reference
//                                 # openai: an OpenAI-compatible chat-completions API
//                                 # gemini: the Gemini generateContent API
//                                 # synthetic: the offline model of llm/synthetic/ (labelled
//                                 # model "synthetic" in every report; its workloads only)
//     corpus: llm/replay_corpus   # relative to PALLADIUM_HOME (replay only)
//     model: ""                   # required for openai and gemini
//     base_url: ""                # "" = the public API; e.g. http://127.0.0.1:8000/v1
//     api_key_env: OPENAI_API_KEY # (GEMINI_API_KEY for gemini) the environment variable
//                                 # holding the key; "" sends no key (a local server). The
//                                 # key itself never appears in a config, log or database.
//     temperature, top_p          # unset = the API's default
//     max_output_tokens: 8192     # per sample, thinking included
//     thinking_budget             # Gemini 2.5 thinkingBudget (tokens; 0 off, -1 dynamic)
//     thinking_level: ""          # Gemini 3 thinkingLevel
//     reasoning_effort: ""        # OpenAI reasoning models
//     max_tokens_field: max_completion_tokens   # or max_tokens for older servers
//     samples_per_call: 0         # n / candidateCount per call; 0 = the provider's default
//     max_concurrent: 8           # calls in flight
//     requests_per_minute: 0      # 0 = no limit
//     tokens_per_minute: 0        # 0 = no limit
//     max_attempts: 6             # calls per sample, the first included
//     timeout_s: 600              # one HTTP exchange
//     max_usd                     # the dollar cap (committed cost); unset = none
//     prices: configs/prices.yaml # relative to PALLADIUM_HOME
//     synthetic:                  # (synthetic only)
//       uncovered: refuse         # a workload without a kernel family in llm/synthetic/:
//                                 # refuse: the config is refused, naming the workload
//                                 # no_code: the model answers it with a sentence saying it
//                                 # has no family and no code, stored as that response and
//                                 # judged like any other (verdict no_code); never a kernel
//
// Owner of the semantics: the llm engineer (llm/, actors/llm_gateway*).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/config/config_reader.hpp"
#include "llm/sampling_params.hpp"

namespace palladium {

struct LlmConfig {
  std::string provider = "replay";
  std::string corpus = "llm/replay_corpus";  // relative to PALLADIUM_HOME
  std::string model;
  std::string base_url;
  std::string api_key_env;  // filled with the provider's default when absent
  SamplingParams sampling;
  std::string max_tokens_field = "max_completion_tokens";
  int samples_per_call = 0;
  int max_concurrent = 8;
  double requests_per_minute = 0;
  double tokens_per_minute = 0;
  int max_attempts = 6;
  double timeout_s = 600;
  std::optional<double> max_usd;
  std::string prices = "configs/prices.yaml";
  // synthetic only: "refuse" or "no_code" (see above).
  std::string synthetic_uncovered = "refuse";

  bool remote() const { return provider == "openai" || provider == "gemini"; }
};

// Reads and validates the `llm` mapping (`node` may be null: all defaults).
LlmConfig parse_llm_config(const ConfigReader& r, const YAML::Node& node);

// Checks what the section names on disk before anything is started or
// stored: for the synthetic provider, that it has a family for each of
// `workloads` (unless llm.synthetic.uncovered is no_code); for the replay provider, that the corpus directory exists under
// `home` and holds a directory for each of `workloads`; for hand_tuned, that
// each workload has a reference. Throws ConfigError
// naming llm.corpus and the missing path.
void check_llm_files(const ConfigReader& r, const LlmConfig& c, const std::filesystem::path& home,
                     const std::vector<std::string>& workloads);

}  // namespace palladium
