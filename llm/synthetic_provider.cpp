#include "llm/synthetic_provider.hpp"

#include <chrono>
#include <utility>

#include "llm/synthetic_model.hpp"

namespace palladium {
namespace {

class SyntheticProvider : public Provider {
 public:
  explicit SyntheticProvider(std::filesystem::path dir) : model_(std::move(dir)) {}

  ChatResponse complete(const ChatRequest& request) override {
    const auto start = std::chrono::steady_clock::now();
    SyntheticAnswer a = model_.answer(request);
    ChatResponse r;
    r.text = std::move(a.text);
    r.model = "synthetic";
    r.prompt_tokens = a.prompt_tokens;
    r.completion_tokens = a.completion_tokens;
    r.tokens_estimated = true;
    r.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             start)
                       .count();
    return r;
  }

  std::string name() const override { return "synthetic"; }

 private:
  SyntheticModel model_;
};

}  // namespace

std::unique_ptr<Provider> make_synthetic_provider(std::filesystem::path synthetic_dir) {
  return std::make_unique<SyntheticProvider>(std::move(synthetic_dir));
}

}  // namespace palladium
