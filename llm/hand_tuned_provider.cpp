#include "llm/hand_tuned_provider.hpp"

#include <chrono>
#include <fstream>
#include <sstream>

#include "llm/token_estimate.hpp"
#include "workloads/workload_catalog.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

class HandTunedProvider : public Provider {
 public:
  explicit HandTunedProvider(fs::path home) : home_(std::move(home)) {}

  ChatResponse complete(const ChatRequest& request) override {
    const auto start = std::chrono::steady_clock::now();
    const WorkloadEntry* entry = workload_catalog().find(request.workload_id);
    if (!entry || !entry->hand_tuned)
      throw ProviderError("hand_tuned: workloads/catalog.json gives workload '" +
                              request.workload_id + "' no hand-tuned reference",
                          false);
    const fs::path path = home_ / *entry->hand_tuned;
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
  fs::path home_;
};

}  // namespace

std::unique_ptr<Provider> make_hand_tuned_provider(std::filesystem::path home) {
  return std::make_unique<HandTunedProvider>(std::move(home));
}

}  // namespace palladium
