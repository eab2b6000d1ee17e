// The sweeps table: one grid over run configs, found again by its config's hash.

#ifndef PALLADIUM_STORE_SWEEPS_TABLE_HPP_
#define PALLADIUM_STORE_SWEEPS_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// Fields marked "store" are filled in by the store and ignored on writes.
struct SweepRecord {
  int64_t id = 0;  // store
  std::string name;
  std::string config_text;
  std::string config_hash;  // store: sha256_hex(config_text)
  std::string created_at;   // store
};

template <>
struct Table<SweepRecord> {
  static constexpr TableSpec spec{"sweeps", "sw", "sweep"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"name"}, r.name);
    f(ColumnSpec{"config_text"}, r.config_text);
    f(ColumnSpec{"config_hash"}, r.config_hash);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEPS_TABLE_HPP_
