#include "config/context_config.hpp"

namespace palladium {

ContextConfig parse_context_config(const ConfigReader& r, const YAML::Node& node,
                                   const std::string& method) {
  ContextConfig c;
  if (node) {
    r.check_keys(node, "context", {"blocks"});
    r.get(node, "blocks", "context.blocks", c.blocks);
    if (auto problem = check_block_names(c.blocks); !problem.empty()) {
      r.fail("context.blocks", problem);
    }
  }
  if (method == "iterative_context" && c.blocks.empty()) {
    r.fail("context.blocks", "must name at least one block for method iterative_context");
  }
  return c;
}

ContextLibrary load_context_library(const ConfigReader& r, const std::filesystem::path& home,
                                    const std::vector<std::string>& workloads) {
  try {
    ContextLibrary lib = ContextLibrary::load(home / "workloads" / "context");
    for (const auto& w : workloads) {
      if (!lib.workload_tags().count(w)) {
        r.fail("context.blocks", "workload '" + w + "' has no tags in " +
                                     (home / "workloads" / "context" / "workload_tags.yaml").string());
      }
    }
    return lib;
  } catch (const ContextError& e) {
    r.fail("context.blocks", e.what());
  }
}

}  // namespace palladium
