// The samples table: every request a search made and what came back; its texts live in blobs.

#ifndef PALLADIUM_STORE_SAMPLES_TABLE_HPP_
#define PALLADIUM_STORE_SAMPLES_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/taxonomy.hpp"
#include "store/columns.hpp"

namespace palladium {

// Fields marked "store" are filled in by the store and ignored on writes.
struct SampleKey {
  int64_t run_id = 0;
  std::string workload;
  std::string method;
  int64_t seed = 0;
  int sample_index = 0;
};

// One request a search made and what came back. Candidates are the samples
// with role code or repair.
struct SampleRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::string workload;
  std::string method;  // e.g. "iterative", "iterative_context", "autocomp"
  int64_t seed = 0;
  int sample_index = 0;
  SampleRole role = SampleRole::code;
  Phase phase = Phase::iterate;
  int generation = 1;                // the method's step (beam iteration)
  std::optional<int64_t> parent_id;  // the sample built on or judged
  std::optional<int64_t> plan_id;    // the plan sample implemented
  std::string plan;                  // that plan's text; "" for none
  std::optional<double> score;       // role score: the rating it gave
  std::string prompt_system;
  std::string prompt_user;
  std::string response;                // raw LLM response
  std::string code;                    // extracted code; "" when none
  std::optional<int64_t> response_id;  // its llm_responses row, if cached
  std::string finish_reason;  // store (read only): its llm_responses row's; "" if none
  std::string prompt_hash;  // store: prompt_hash(prompt_system, prompt_user)
  std::string code_hash;    // store: sha256_hex(code)
  bool superseded = false;  // store
  std::string created_at;   // store

  SampleKey key() const { return {run_id, workload, method, seed, sample_index}; }
};

struct PutSampleResult {
  int64_t id = 0;       // the live sample at the key
  bool inserted = false;  // false: an identical-prompt sample was there
  // The sample this write superseded (same key, different prompt).
  std::optional<int64_t> superseded_id;
};

template <>
struct Table<SampleRecord> {
  static constexpr TableSpec spec{"samples", "s", "sample"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"run_id"}, r.run_id);
    f(ColumnSpec{"workload"}, r.workload);
    f(ColumnSpec{"method"}, r.method);
    f(ColumnSpec{"seed"}, r.seed);
    f(ColumnSpec{"sample_index"}, r.sample_index);
    f(ColumnSpec{"role"}, r.role);
    f(ColumnSpec{"phase"}, r.phase);
    f(ColumnSpec{"generation"}, r.generation);
    f(ColumnSpec{"parent_id"}, r.parent_id);
    f(ColumnSpec{"plan_id"}, r.plan_id);
    f(ColumnSpec{"score"}, r.score);
    f(ColumnSpec{"response_id"}, r.response_id);
    f(ColumnSpec{"prompt_hash"}, r.prompt_hash);
    f(ColumnSpec{"code_hash", ColumnKind::store}, r.code_hash);  // written as the code's blob
    f(ColumnSpec{"superseded", ColumnKind::store}, r.superseded);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"", ColumnKind::expression,
                 "(SELECT finish_reason FROM llm_responses WHERE id = s.response_id)"},
      r.finish_reason);
    f(ColumnSpec{"plan_hash", ColumnKind::blob}, r.plan);
    f(ColumnSpec{"system_hash", ColumnKind::blob}, r.prompt_system);
    f(ColumnSpec{"user_hash", ColumnKind::blob}, r.prompt_user);
    f(ColumnSpec{"response_hash", ColumnKind::blob}, r.response);
    f(ColumnSpec{"code_hash", ColumnKind::blob}, r.code);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_SAMPLES_TABLE_HPP_
