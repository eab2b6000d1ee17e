// The workloads this binary knows: workloads/catalog.json, written from the Python modules
// (`python -m workloads.catalog`) and embedded at build time.
//
// It is where the C++ side learns a workload's name, its module, whether it has a hand-tuned
// reference and where, and its static inputs, instead of reading module text or probing for
// files by a naming rule. Paths are relative to PALLADIUM_HOME.
//
// Errors: parse() throws WorkloadCatalogError naming the origin and the entry at fault.

#ifndef PALLADIUM_WORKLOADS_WORKLOAD_CATALOG_HPP_
#define PALLADIUM_WORKLOADS_WORKLOAD_CATALOG_HPP_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace palladium {

class WorkloadCatalogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WorkloadEntry {
  std::string id;                         // JAXBench id: "8p", "41k"
  std::string name;                       // the module's NAME: "GEMM"
  std::string module;                     // "workloads/wl_8p.py"
  std::optional<std::string> hand_tuned;  // "workloads/hand_tuned/ref_8p.py"; none: no reference
  std::vector<int> static_argnums;        // inputs that are configuration, not arrays
};

class WorkloadCatalog {
 public:
  // `json_text` in catalog.json's shape; `origin` names it in errors.
  static WorkloadCatalog parse(const std::string& json_text, const std::string& origin);

  // In JAXBench order, as written.
  const std::vector<WorkloadEntry>& entries() const { return entries_; }

  // nullptr: no such workload.
  const WorkloadEntry* find(const std::string& id) const;

  // The ids of the workloads with a hand-tuned reference, in catalog order.
  std::vector<std::string> hand_tuned_ids() const;

  // "1p, 2p, ...": for errors that say what exists.
  std::string id_list() const;

 private:
  std::vector<WorkloadEntry> entries_;
};

// The catalog embedded at build time, parsed on first use.
const WorkloadCatalog& workload_catalog();

}  // namespace palladium

#endif  // PALLADIUM_WORKLOADS_WORKLOAD_CATALOG_HPP_
