#include "config/reference_cell.hpp"

#include <algorithm>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "workloads/workload_catalog.hpp"

namespace palladium {

std::string reference_cell_config(const SweepConfig& sweep) {
  std::vector<std::string> refs;
  for (const auto& w : workload_catalog().hand_tuned_ids()) {
    for (const auto& cell : sweep.cells)
      if (std::count(cell.config.workloads.begin(), cell.config.workloads.end(), w)) {
        refs.push_back(w);
        break;
      }
  }
  if (refs.empty()) return "";
  YAML::Node base = YAML::Load(sweep.base.text);
  YAML::Node cfg(YAML::NodeType::Map);
  cfg["name"] = sweep.name + "[" + kReferenceCellKey + "]";
  cfg["method"] = "iterative";
  YAML::Node workloads(YAML::NodeType::Sequence);
  for (const auto& w : refs) workloads.push_back(w);
  workloads.SetStyle(YAML::EmitterStyle::Flow);
  cfg["workloads"] = workloads;
  cfg["budget_per_workload"] = 1;
  YAML::Node seeds(YAML::NodeType::Sequence);
  seeds.push_back(0);
  cfg["seeds"] = seeds;
  cfg["llm"]["provider"] = "hand_tuned";
  if (base["evaluation"]) cfg["evaluation"] = base["evaluation"];
  YAML::Emitter out;
  out << cfg;
  return std::string(out.c_str()) + "\n";
}

}  // namespace palladium
