// The cells table: the points of a sweep's grid, each with its whole run config.

#ifndef PALLADIUM_STORE_CELLS_TABLE_HPP_
#define PALLADIUM_STORE_CELLS_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// Fields marked "store" are filled in by the store and ignored on writes.
struct CellRecord {
  int64_t id = 0;  // store
  int64_t sweep_id = 0;
  std::string cell_key;  // stable id from the grid expansion; unique per sweep
  int ordinal = 0;       // position in the expanded grid
  std::string params_json = "{}";
  std::string config_text;
  std::string created_at;  // store
  // store, from config_text (store/run_identity.hpp): what reports name it by
  std::string method;
  std::string model;               // the model label
  std::vector<std::string> suite;  // the workloads
};

template <>
struct Table<CellRecord> {
  static constexpr TableSpec spec{"cells", "ce", "cell"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"sweep_id"}, r.sweep_id);
    f(ColumnSpec{"cell_key"}, r.cell_key);
    f(ColumnSpec{"ordinal"}, r.ordinal);
    f(ColumnSpec{"params_json"}, r.params_json);
    f(ColumnSpec{"config_text"}, r.config_text);
    f(ColumnSpec{"created_at", ColumnKind::store}, r.created_at);
    f(ColumnSpec{"method", ColumnKind::field, {}, "''"}, r.method);
    f(ColumnSpec{"model", ColumnKind::field, {}, "''"}, r.model);
    f(ColumnSpec{"suite_json", ColumnKind::field, {}, "'[]'"}, r.suite);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_CELLS_TABLE_HPP_
