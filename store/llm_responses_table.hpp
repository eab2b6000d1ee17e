// The llm_responses table: the LLM response cache, keyed by what determines an answer.

#ifndef PALLADIUM_STORE_LLM_RESPONSES_TABLE_HPP_
#define PALLADIUM_STORE_LLM_RESPONSES_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// The cache key of one LLM response; response_key() builds it from texts.
struct ResponseKey {
  std::string provider;
  std::string model;
  std::string prompt_hash;  // prompt_hash(system, user)
  std::string params_hash;  // sha256_hex(params_json)
  int sample_index = 0;
  int64_t seed = 0;
};

ResponseKey response_key(const std::string& provider, const std::string& model,
                         const std::string& system_prompt, const std::string& user_prompt,
                         const std::string& params_json, int sample_index, int64_t seed);

struct LlmResponseRecord {
  int64_t id = 0;  // store
  std::string provider;
  std::string model;  // the model asked for
  // Canonical sampling parameters (e.g. nlohmann::json::dump() of an
  // object, whose keys are sorted): equal parameters must give equal text.
  std::string params_json = "{}";
  int sample_index = 0;
  int64_t seed = 0;
  std::string prompt_system;
  std::string prompt_user;
  std::string text;            // the response
  std::string model_reported;  // the model as the API named it
  std::string finish_reason;   // "stop", "length", ...; "" unknown
  int64_t prompt_tokens = 0;   // this response's share of its call
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  bool tokens_estimated = false;
  double latency_ms = 0.0;
  std::optional<double> cost_usd;
  std::string batch_id;
  std::optional<int64_t> call_id;  // the llm_calls row that fetched it
  int64_t cached_prompt_tokens = 0;  // this response's share of the call's cached tokens
  std::string prompt_hash;  // store
  std::string params_hash;  // store
  std::string created_at;   // store

  ResponseKey key() const;
};

// A run's LLM usage split by who paid, per workload (RunStore::llm_attribution): answers
// this run's own calls fetched ("paid"), and answers it reused from the shared cache, which
// the run (or cell) that first asked paid for. A cell's cost is then the same whatever order
// the cells ran in: paid + reused is what it would have cost alone.
struct LlmAttribution {
  std::string workload;
  int64_t answers = 0;
  int64_t paid_answers = 0, reused_answers = 0;
  int64_t paid_prompt_tokens = 0, paid_output_tokens = 0;
  int64_t reused_prompt_tokens = 0, reused_output_tokens = 0;
  double paid_usd = 0, reused_usd = 0;  // reused: what the payer's call cost for these answers
  int64_t cached_prompt_tokens = 0;     // of paid_prompt_tokens, served by the prompt cache
  int64_t truncated = 0;                // answers cut off at the output limit
};

struct PutResponseResult {
  int64_t id = 0;
  bool inserted = false;  // false: the key was already cached
};

// What put_answered_call stored: the call's row and, per response in the
// order given, what put_response would have returned.
struct PutAnsweredCallResult {
  int64_t call_id = 0;
  std::vector<PutResponseResult> responses;
};

template <>
struct Table<LlmResponseRecord> {
  static constexpr TableSpec spec{"llm_responses", "r", "llm response"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"provider"}, r.provider);
    f(ColumnSpec{"model"}, r.model);
    f(ColumnSpec{"prompt_hash"}, r.prompt_hash);
    f(ColumnSpec{"params_hash"}, r.params_hash);
    f(ColumnSpec{"sample_index"}, r.sample_index);
    f(ColumnSpec{"seed"}, r.seed);
    f(ColumnSpec{"params_json"}, r.params_json);
    f(ColumnSpec{"system_hash", ColumnKind::blob}, r.prompt_system);
    f(ColumnSpec{"user_hash", ColumnKind::blob}, r.prompt_user);
    f(ColumnSpec{"response_hash", ColumnKind::blob}, r.text);
    f(ColumnSpec{"model_reported"}, r.model_reported);
    f(ColumnSpec{"finish_reason"}, r.finish_reason);
    f(ColumnSpec{"prompt_tokens"}, r.prompt_tokens);
    f(ColumnSpec{"completion_tokens"}, r.completion_tokens);
    f(ColumnSpec{"thinking_tokens"}, r.thinking_tokens);
    f(ColumnSpec{"tokens_estimated"}, r.tokens_estimated);
    f(ColumnSpec{"latency_ms"}, r.latency_ms);
    f(ColumnSpec{"cost_usd"}, r.cost_usd);
    f(ColumnSpec{"batch_id"}, r.batch_id);
    f(ColumnSpec{"call_id"}, r.call_id);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"cached_prompt_tokens"}, r.cached_prompt_tokens);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_LLM_RESPONSES_TABLE_HPP_
