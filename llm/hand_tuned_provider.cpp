#include "llm/hand_tuned_provider.hpp"

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

#include "llm/token_estimate.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

class HandTunedProvider : public Provider {
 public:
  explicit HandTunedProvider(fs::path dir) : dir_(std::move(dir)) {}

  ChatResponse complete(const ChatRequest& request) override {
    const auto start = std::chrono::steady_clock::now();
    static const std::regex id_re("^[0-9]+[a-z]$");
    if (!std::regex_match(request.workload_id, id_re))
      throw ProviderError("hand_tuned: '" + request.workload_id + "' is not a workload id", false);
    const fs::path path = hand_tuned_path(dir_, request.workload_id);
    std::ifstream in(path);
    if (!in || !fs::is_regular_file(path))
      throw ProviderError("hand_tuned: no reference for workload " + request.workload_id + " (" +
                              path.string() + ")",
                          false);
    std::ostringstream source;
    source << in.rdbuf();
    ChatResponse r;
    r.text = "```python\n" + source.str() + "```\n";
    r.model = "hand_tuned";
    r.prompt_tokens = estimate_tokens(request.system_prompt.size() + request.user_prompt.size());
    r.completion_tokens = estimate_tokens(r.text.size());
    r.tokens_estimated = true;
    r.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

  std::string name() const override { return "hand_tuned"; }

 private:
  fs::path dir_;
};

}  // namespace

std::unique_ptr<Provider> make_hand_tuned_provider(std::filesystem::path dir) {
  return std::make_unique<HandTunedProvider>(std::move(dir));
}

std::filesystem::path hand_tuned_path(const std::filesystem::path& dir,
                                      const std::string& workload_id) {
  return dir / ("ref_" + workload_id + ".py");
}

}  // namespace palladium
