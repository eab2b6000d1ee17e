// The workloads' FLOPs and bytes (workloads/workload_costs.json, written by
// scripts/workload_costs.py) that the report's roofline fractions divide by
// the chip's peaks (search/roofline.hpp).

#ifndef PALLADIUM_STORE_SWEEP_REPORT_COSTS_HPP_
#define PALLADIUM_STORE_SWEEP_REPORT_COSTS_HPP_

#include <filesystem>
#include <map>
#include <string>

#include "search/roofline.hpp"

namespace palladium {

using WorkloadCosts = std::map<std::string, WorkloadCost>;

// A missing file gives an empty table (the report then shows no roofline
// fraction); a malformed one, or a workload without positive "flops" and
// "bytes", throws StoreError naming the file and the workload.
WorkloadCosts load_workload_costs(const std::filesystem::path& path);

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEP_REPORT_COSTS_HPP_
