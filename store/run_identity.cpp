#include "store/run_identity.hpp"

#include <yaml-cpp/yaml.h>

namespace palladium {
namespace {

std::string scalar_or(const YAML::Node& node, const std::string& fallback) {
  try {
    return node && node.IsScalar() ? node.as<std::string>() : fallback;
  } catch (const YAML::Exception&) {
    return fallback;
  }
}

std::vector<std::string> workloads_of(const YAML::Node& root) {
  std::vector<std::string> out;
  const YAML::Node list = root["workloads"];
  if (!list || !list.IsSequence()) return out;
  for (const auto& item : list) {
    if (!item.IsScalar()) return {};
    out.push_back(item.as<std::string>());
  }
  return out;
}

}  // namespace

RunIdentity run_identity(const std::string& config_text) {
  // The same readings the reports made of the stored YAML before schema version 3, so a
  // migrated database reports what it reported before.
  RunIdentity id;
  YAML::Node root;
  try {
    root = YAML::Load(config_text);
    id.method = scalar_or(root["method"], "iterative");
  } catch (const YAML::Exception&) {
    return {"unknown", "unknown", {}};
  }
  try {
    const YAML::Node llm = root["llm"];
    const std::string provider = scalar_or(llm ? llm["provider"] : YAML::Node(), "replay");
    if (provider == "replay" || provider == "synthetic" || provider == "hand_tuned")
      id.model = provider;
    else
      id.model = scalar_or(llm["model"], provider);
    id.suite = workloads_of(root);
  } catch (const YAML::Exception&) {
    id.model = "unknown";
  }
  return id;
}

}  // namespace palladium
