// The runs table: one search run, found again by its config's hash and its cell.

#ifndef PALLADIUM_STORE_RUNS_TABLE_HPP_
#define PALLADIUM_STORE_RUNS_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// Fields marked "store" are filled in by the store and ignored on writes.
struct RunRecord {
  int64_t id = 0;
  std::string name;
  std::string config_text;
  std::string config_hash;  // sha256_hex(config_text)
  std::optional<int64_t> cell_id;
  std::string started_at;                  // ISO-8601 UTC
  std::optional<std::string> finished_at;  // unset while running
  std::string status;                      // "running", then finish_run's
  std::string status_reason;
  // store, from config_text (store/run_identity.hpp): what reports name it by
  std::string method;
  std::string model;               // the model label
  std::vector<std::string> suite;  // the workloads
};

// The statuses finish_run accepts.
inline constexpr const char* kRunStatuses[] = {"finished", "incomplete", "interrupted",
                                               "failed", "stopped"};

template <>
struct Table<RunRecord> {
  static constexpr TableSpec spec{"runs", "ru", "run"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"name"}, r.name);
    f(ColumnSpec{"config_text"}, r.config_text);
    f(ColumnSpec{"config_hash"}, r.config_hash);
    f(ColumnSpec{"cell_id"}, r.cell_id);
    f(ColumnSpec{"started_at", ColumnKind::store}, r.started_at);
    f(ColumnSpec{"finished_at", ColumnKind::store}, r.finished_at);
    f(ColumnSpec{"status", ColumnKind::store}, r.status);
    f(ColumnSpec{"status_reason", ColumnKind::store}, r.status_reason);
    f(ColumnSpec{"method", ColumnKind::field, {}, "''"}, r.method);
    f(ColumnSpec{"model", ColumnKind::field, {}, "''"}, r.model);
    f(ColumnSpec{"suite_json", ColumnKind::field, {}, "'[]'"}, r.suite);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUNS_TABLE_HPP_
