#include "llm/split_runner.hpp"

#include <stdexcept>

namespace palladium {
namespace {

class SplitRunner : public CallRunner {
 public:
  SplitRunner(std::unique_ptr<CallRunner> online, std::unique_ptr<CallRunner> batch,
              std::function<bool(const ChatRequest&)> goes_batch)
      : online_(std::move(online)), batch_(std::move(batch)), goes_batch_(std::move(goes_batch)) {
    if (online_->provider() != batch_->provider() || online_->model() != batch_->model())
      throw std::invalid_argument("split runner: online " + online_->provider() + "/" +
                                  online_->model() + " and batch " + batch_->provider() + "/" +
                                  batch_->model() + " must be the same provider and model");
  }

  std::string provider() const override { return online_->provider(); }
  std::string model() const override { return online_->model(); }
  int max_samples_per_call() const override { return online_->max_samples_per_call(); }
  std::string params_json(const ChatRequest& request) const override {
    return online_->params_json(request);
  }
  void start(const ProviderCall& call, Done done) override {
    (goes_batch_(call.request) ? batch_ : online_)->start(call, std::move(done));
  }

 private:
  std::unique_ptr<CallRunner> online_, batch_;
  std::function<bool(const ChatRequest&)> goes_batch_;
};

}  // namespace

std::unique_ptr<CallRunner> make_split_runner(std::unique_ptr<CallRunner> online,
                                              std::unique_ptr<CallRunner> batch,
                                              std::function<bool(const ChatRequest&)> goes_batch) {
  return std::make_unique<SplitRunner>(std::move(online), std::move(batch), std::move(goes_batch));
}

}  // namespace palladium
