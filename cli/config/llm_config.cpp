#include "cli/config/llm_config.hpp"

namespace palladium {

LlmConfig parse_llm_config(const ConfigReader& r, const YAML::Node& node) {
  LlmConfig c;
  if (!node) return c;
  r.check_keys(node, "llm", {"provider", "corpus"});
  r.get(node, "provider", "llm.provider", c.provider);
  r.get(node, "corpus", "llm.corpus", c.corpus);
  if (c.provider != "replay")
    r.fail("llm.provider", "'" + c.provider + "' is not implemented (available: replay)");
  if (c.corpus.empty()) r.fail("llm.corpus", "must name a directory");
  return c;
}

void check_llm_files(const ConfigReader& r, const LlmConfig& c, const std::filesystem::path& home,
                     const std::vector<std::string>& workloads) {
  if (c.provider != "replay") return;
  auto dir = home / c.corpus;
  if (!std::filesystem::is_directory(dir))
    r.fail("llm.corpus", "no corpus directory " + dir.string());
  for (const auto& w : workloads) {
    if (!std::filesystem::is_directory(dir / w))
      r.fail("llm.corpus", "the corpus " + dir.string() + " has no responses for workload '" + w +
                               "' (expected the directory " + (dir / w).string() + ")");
  }
}

}  // namespace palladium
