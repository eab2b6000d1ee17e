#include "cli/config/llm_config.hpp"

#include "llm/hand_tuned_provider.hpp"

namespace palladium {

LlmConfig parse_llm_config(const ConfigReader& r, const YAML::Node& node) {
  LlmConfig c;
  if (!node) return c;
  r.check_keys(node, "llm", {"provider", "corpus"});
  r.get(node, "provider", "llm.provider", c.provider);
  r.get(node, "corpus", "llm.corpus", c.corpus);
  if (c.provider != "replay" && c.provider != "hand_tuned")
    r.fail("llm.provider",
           "'" + c.provider + "' is not implemented (available: replay, hand_tuned)");
  if (c.corpus.empty()) r.fail("llm.corpus", "must name a directory");
  return c;
}

void check_llm_files(const ConfigReader& r, const LlmConfig& c, const std::filesystem::path& home,
                     const std::vector<std::string>& workloads) {
  if (c.provider == "hand_tuned") {
    for (const auto& w : workloads) {
      auto ref = hand_tuned_path(home / "workloads" / "hand_tuned", w);
      if (!std::filesystem::is_regular_file(ref))
        r.fail("workloads", "'" + w + "' has no hand-tuned reference (expected " + ref.string() + ")");
    }
    return;
  }
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
