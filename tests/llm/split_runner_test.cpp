#include "llm/split_runner.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

// Answers at once and says which runner it is in the answer's batch id.
class Tagged : public CallRunner {
 public:
  Tagged(std::string tag, std::string model = "m") : tag_(std::move(tag)), model_(std::move(model)) {}
  std::string provider() const override { return "openai"; }
  std::string model() const override { return model_; }
  int max_samples_per_call() const override { return 4; }
  std::string params_json(const ChatRequest&) const override { return "{}"; }
  void start(const ProviderCall&, Done done) override {
    CallResult r;
    r.batch_id = tag_;
    r.usage.batch = tag_ == "job";
    done(CallOutcome{r, std::nullopt});
  }

 private:
  std::string tag_, model_;
};

std::string route(CallRunner& runner, SampleRole role, const std::string& method) {
  ProviderCall call;
  call.request.role = role;
  call.request.method = method;
  call.sample_indices = {0};
  std::string got;
  runner.start(call, [&](CallOutcome o) { got = o.result->batch_id; });
  return got;
}

TEST(SplitRunner, TheChainStaysOnlineAndTheFanOutGoesInJobs) {
  auto runner = make_split_runner(std::make_unique<Tagged>("online"), std::make_unique<Tagged>("job"),
                                  [](const ChatRequest& r) {
                                    return r.role == SampleRole::code && r.method != "iterative";
                                  });
  EXPECT_EQ(route(*runner, SampleRole::code, "beam"), "job");
  EXPECT_EQ(route(*runner, SampleRole::code, "iterative"), "online");
  EXPECT_EQ(route(*runner, SampleRole::plan, "beam"), "online");
}

TEST(SplitRunner, RefusesRunnersOfDifferentModels) {
  EXPECT_THROW(make_split_runner(std::make_unique<Tagged>("online", "a"),
                                 std::make_unique<Tagged>("job", "b"),
                                 [](const ChatRequest&) { return true; }),
               std::invalid_argument);
}

}  // namespace
}  // namespace palladium
