// The llm_calls table: every LLM request sent (ok or failed), never deduplicated.

#ifndef PALLADIUM_STORE_LLM_CALLS_TABLE_HPP_
#define PALLADIUM_STORE_LLM_CALLS_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/taxonomy.hpp"
#include "store/columns.hpp"

namespace palladium {

// One LLM request as sent (ok or failed), with the API's own usage.
struct LlmCallRecord {
  int64_t id = 0;  // store
  std::optional<int64_t> run_id;  // unset when it served several runs
  std::string provider;
  std::string model;
  SampleRole role = SampleRole::code;
  int samples = 1;            // responses asked for (n)
  std::string status = "ok";  // "ok" or "error"
  std::string error_code;     // protocol/errc.hpp spelling; "" if ok
  std::string error_text;     // must hold no secret
  int http_status = 0;        // 0 when not HTTP
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t thinking_tokens = 0;
  bool tokens_estimated = false;
  double latency_ms = 0.0;
  std::optional<double> cost_usd;
  std::string batch_id;     // provider batch job; "" online
  std::string created_at;   // store
  int64_t cached_prompt_tokens = 0;     // of prompt_tokens, from the provider's prompt cache
  std::optional<double> cache_saved_usd;  // what the cache hit saved; unset: no price
  int64_t prompt_estimate = 0;          // Palladium's chars/4 estimate of the prompt
};

template <>
struct Table<LlmCallRecord> {
  static constexpr TableSpec spec{"llm_calls", "lc", "llm call"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"run_id"}, r.run_id);
    f(ColumnSpec{"provider"}, r.provider);
    f(ColumnSpec{"model"}, r.model);
    f(ColumnSpec{"role"}, r.role);
    f(ColumnSpec{"samples"}, r.samples);
    f(ColumnSpec{"status"}, r.status);
    f(ColumnSpec{"error_code"}, r.error_code);
    f(ColumnSpec{"error_text"}, r.error_text);
    f(ColumnSpec{"http_status"}, r.http_status);
    f(ColumnSpec{"prompt_tokens"}, r.prompt_tokens);
    f(ColumnSpec{"completion_tokens"}, r.completion_tokens);
    f(ColumnSpec{"thinking_tokens"}, r.thinking_tokens);
    f(ColumnSpec{"tokens_estimated"}, r.tokens_estimated);
    f(ColumnSpec{"latency_ms"}, r.latency_ms);
    f(ColumnSpec{"cost_usd"}, r.cost_usd);
    f(ColumnSpec{"batch_id"}, r.batch_id);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"cached_prompt_tokens"}, r.cached_prompt_tokens);
    f(ColumnSpec{"cache_saved_usd"}, r.cache_saved_usd);
    f(ColumnSpec{"prompt_estimate"}, r.prompt_estimate);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_LLM_CALLS_TABLE_HPP_
