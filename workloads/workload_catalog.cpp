#include "workloads/workload_catalog.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "workloads/catalog_json.hpp"

namespace palladium {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& where,
                       const std::string& what) {
  throw WorkloadCatalogError(origin + ": " + where + ": " + what);
}

std::string string_field(const json& entry, const std::string& key, const std::string& origin,
                         const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_string() || it->get<std::string>().empty())
    fail(origin, where, "'" + key + "' must be a non-empty string");
  return it->get<std::string>();
}

}  // namespace

WorkloadCatalog WorkloadCatalog::parse(const std::string& json_text, const std::string& origin) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail(origin, "(file)", std::string("not JSON: ") + e.what());
  }
  if (!root.is_object() || !root.contains("workloads") || !root["workloads"].is_array())
    fail(origin, "(top level)", "expected an object with a 'workloads' list");
  WorkloadCatalog catalog;
  std::set<std::string> seen;
  const json& list = root["workloads"];
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    std::string where = "workloads[" + std::to_string(i) + "]";
    if (!e.is_object()) fail(origin, where, "expected an object");
    WorkloadEntry w;
    w.id = string_field(e, "id", origin, where);
    where += " (" + w.id + ")";
    if (!seen.insert(w.id).second) fail(origin, where, "the id appears twice");
    w.name = string_field(e, "name", origin, where);
    w.module = string_field(e, "module", origin, where);
    auto ref = e.find("hand_tuned");
    if (ref == e.end() || !(ref->is_null() || (ref->is_string() && !ref->get<std::string>().empty())))
      fail(origin, where, "'hand_tuned' must be a path or null");
    if (ref->is_string()) w.hand_tuned = ref->get<std::string>();
    auto statics = e.find("static_argnums");
    if (statics == e.end() || !statics->is_array())
      fail(origin, where, "'static_argnums' must be a list of input indices");
    for (const auto& index : *statics) {
      if (!index.is_number_integer() || index.get<int>() < 0)
        fail(origin, where, "'static_argnums' must be a list of input indices, not " + index.dump());
      w.static_argnums.push_back(index.get<int>());
    }
    catalog.entries_.push_back(std::move(w));
  }
  return catalog;
}

const WorkloadEntry* WorkloadCatalog::find(const std::string& id) const {
  for (const auto& e : entries_)
    if (e.id == id) return &e;
  return nullptr;
}

std::vector<std::string> WorkloadCatalog::hand_tuned_ids() const {
  std::vector<std::string> ids;
  for (const auto& e : entries_)
    if (e.hand_tuned) ids.push_back(e.id);
  return ids;
}

std::string WorkloadCatalog::id_list() const {
  std::string list;
  for (const auto& e : entries_) list += (list.empty() ? "" : ", ") + e.id;
  return list;
}

const WorkloadCatalog& workload_catalog() {
  static const WorkloadCatalog catalog =
      WorkloadCatalog::parse(kWorkloadCatalogJson, "workloads/catalog.json (built in)");
  return catalog;
}

}  // namespace palladium
