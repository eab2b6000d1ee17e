// The sittings table: side-by-side re-timings of a search's best kernels, one row per kernel;
// the rows of one sitting share its number and its baseline's figures.

#ifndef PALLADIUM_STORE_SITTINGS_TABLE_HPP_
#define PALLADIUM_STORE_SITTINGS_TABLE_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/columns.hpp"

namespace palladium {

// One side-by-side re-timing of a search's best kernels (table sittings): each kernel's median
// and band, and the baseline's, from one sitting on one slot. `error` set: not held (no times).
struct SittingKernel {
  int64_t candidate_id = 0;
  std::optional<double> kernel_ms, kernel_ms_low, kernel_ms_high;
};
struct SittingRecord {
  int64_t sitting = 0;  // store
  int64_t run_id = 0;
  std::string workload;
  std::string method;
  int64_t seed = 0;
  std::vector<SittingKernel> kernels;  // best by the evaluations first
  std::optional<double> baseline_ms, baseline_ms_low, baseline_ms_high;
  int timing_runs = 0;
  std::string timing_kind;
  std::string agent_key;
  std::string error;
};

// One row of the table: a kernel of a sitting with the sitting's shared figures.
struct SittingRow {
  int64_t id = 0;  // store
  int64_t sitting = 0;
  int64_t run_id = 0;
  std::string workload;
  std::string method;
  int64_t seed = 0;
  int64_t position = 0;  // 0: the best by the evaluations' timings, 1: the runner-up
  SittingKernel kernel;
  std::optional<double> baseline_ms, baseline_ms_low, baseline_ms_high;
  int timing_runs = 0;
  std::string timing_kind;
  std::string agent_key;
  std::string error;
};

template <>
struct Table<SittingRow> {
  static constexpr TableSpec spec{"sittings", "si", "sitting row"};
  template <typename R, typename F>
  static void columns(R& r, F&& f) {
    f(ColumnSpec{"id", ColumnKind::store}, r.id);
    f(ColumnSpec{"sitting"}, r.sitting);
    f(ColumnSpec{"run_id"}, r.run_id);
    f(ColumnSpec{"workload"}, r.workload);
    f(ColumnSpec{"method"}, r.method);
    f(ColumnSpec{"seed"}, r.seed);
    f(ColumnSpec{"position"}, r.position);
    f(ColumnSpec{"candidate_id"}, r.kernel.candidate_id);
    f(ColumnSpec{"kernel_ms"}, r.kernel.kernel_ms);
    f(ColumnSpec{"kernel_ms_low"}, r.kernel.kernel_ms_low);
    f(ColumnSpec{"kernel_ms_high"}, r.kernel.kernel_ms_high);
    f(ColumnSpec{"baseline_ms"}, r.baseline_ms);
    f(ColumnSpec{"baseline_ms_low"}, r.baseline_ms_low);
    f(ColumnSpec{"baseline_ms_high"}, r.baseline_ms_high);
    f(ColumnSpec{"timing_runs"}, r.timing_runs);
    f(ColumnSpec{"timing_kind"}, r.timing_kind);
    f(ColumnSpec{"agent_key"}, r.agent_key);
    f(ColumnSpec{"error"}, r.error);
  }
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_SITTINGS_TABLE_HPP_
