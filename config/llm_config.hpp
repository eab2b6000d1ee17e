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
//     max_tokens_field: max_completion_tokens   # or max_tokens for older servers; a server
//                                 # that answers past the limit (it ignored the field) gets
//                                 # max_tokens from then on, with a warning
//     fold_system_prompt: false   # true: the system text goes first in the user message
//                                 # (models or chat templates without a system role)
//     send_seed: true             # OpenAI seed / Gemini generationConfig.seed per call
//     prompt_shortfall: error     # the server counted under half the prompt's estimated
//                                 # tokens (a dropped system message, a cut prompt):
//                                 # error fails the call (prompt_shortfall), warn logs it
//     samples_per_call: 0         # n / candidateCount per call; 0 = the provider's default
//     max_concurrent: 8           # calls in flight
//     requests_per_minute: 0      # 0 = no limit
//     tokens_per_minute: 0        # 0 = no limit
//     max_attempts: 6             # calls per sample, the first included
//     timeout_s: 600              # one HTTP exchange
//     max_usd                     # the dollar cap (committed cost); unset = none
//     max_usd_per_window          # spend-rate limit: committed $ per rolling window; unset
//     spend_window_s: 600         #   = none (Gemini Tier 1: $10 per 10 minutes)
//     max_usd_per_10min           # the same limit over a 600 s window (either key, not both)
//     call_deadline_s             # total time for one sample's call, retries included, from
//                                 # its first attempt; past it: Errc deadline_exceeded
//                                 # "call_deadline". unset = none
//     adaptive_concurrency: true  # halve calls in flight on 429s, creep back on success
//     mode: online                # batch: every call through the provider's batch API at
//                                 # the batch price (openai, gemini); calls started within
//                                 # batch_collect_s of each other go out as one job
//     batch_roles: [code, plan, score, repair, menu]  # with mode batch: the roles whose calls
//                                 # go in batch jobs (default: every role); the others online
//     online_methods: []          # with mode batch: methods whose calls stay online, e.g.
//                                 # [iterative]: its chain waits on each answer, so a job (up
//                                 # to 24 h) per step gains half the price and loses the day
//     batch_collect_s: 2
//     batch_poll_s: 30            # how often a running job is polled
//     batch_journal: runs/llm_batches.jsonl  # (relative to PALLADIUM_HOME) every submitted
//                                 # job; a resumed run polls an unfinished job instead of
//                                 # submitting its calls again
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

#include "config/config_reader.hpp"
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
  bool fold_system_prompt = false;
  bool send_seed = true;
  std::string prompt_shortfall = "error";  // or "warn"
  int samples_per_call = 0;
  int max_concurrent = 8;
  double requests_per_minute = 0;
  double tokens_per_minute = 0;
  int max_attempts = 6;
  double timeout_s = 600;
  std::optional<double> max_usd;
  std::optional<double> max_usd_per_window;
  double spend_window_s = 600;
  std::optional<double> call_deadline_s;
  bool adaptive_concurrency = true;
  std::string mode = "online";  // or "batch"
  std::vector<std::string> batch_roles;     // empty: every role (mode batch only)
  std::vector<std::string> online_methods;  // stay online in mode batch
  double batch_collect_s = 2;
  double batch_poll_s = 30;
  std::string batch_journal = "runs/llm_batches.jsonl";
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
