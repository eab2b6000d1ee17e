// The quarantined_keys table: agent keys the result checks caught, per run that caught them.

#ifndef PALLADIUM_STORE_QUARANTINES_TABLE_HPP_
#define PALLADIUM_STORE_QUARANTINES_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// A key the dispatcher quarantined during run `run_id` (actors/eval_dispatcher.hpp).
struct QuarantineRecord {
  int64_t id = 0;  // store
  int64_t run_id = 0;
  std::string agent_key;  // "" on a plaintext link: its results cannot be traced by key
  std::string agent_id;
  std::string reason;
  int64_t job_id = 0;
  std::string created_at;  // store
  int64_t evaluations = 0;  // store, on read: evaluations in the database sent by this key
};

template <>
struct Table<QuarantineRecord> {
  static constexpr TableSpec spec{"quarantined_keys", "q", "quarantined key"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"run_id"}, r.run_id);
    f(ColumnSpec{"agent_key"}, r.agent_key);
    f(ColumnSpec{"agent_id"}, r.agent_id);
    f(ColumnSpec{"reason"}, r.reason);
    f(ColumnSpec{"job_id"}, r.job_id);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"", ColumnKind::expression,
                 "(SELECT COUNT(*) FROM evaluations e WHERE q.agent_key != '' AND "
                 "e.agent_key = q.agent_key)"},
      r.evaluations);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_QUARANTINES_TABLE_HPP_
