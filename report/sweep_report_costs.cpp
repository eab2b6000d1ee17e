#include "report/sweep_report_costs.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "store/store_error.hpp"

namespace palladium {

WorkloadCosts load_workload_costs(const std::filesystem::path& path) {
  WorkloadCosts table;
  std::ifstream in(path);
  if (!in) return table;
  try {
    auto doc = nlohmann::json::parse(in);
    for (const auto& [id, row] : doc.at("workloads").items()) {
      WorkloadCost c{row.at("flops").get<double>(), row.at("bytes").get<double>()};
      if (!(c.flops > 0.0) || !(c.bytes > 0.0))
        throw StoreError(path.string() + ": workload " + id +
                         ": 'flops' and 'bytes' must both be > 0");
      table[id] = c;
    }
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(path.string() + ": not a workload-cost table: " + e.what());
  }
  return table;
}

}  // namespace palladium
