// A CallRunner (llm/call_runner.hpp) whose calls the test finishes: it keeps every call the
// gateway starts, and the test answers or fails each one when it chooses. With the gateway on
// the deterministic fixture, nothing reaches a network and no call ends by itself.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "llm/call_runner.hpp"

namespace palladium::testing {

class ScriptedRunner : public CallRunner {
 public:
  struct Started {
    ProviderCall call;
    Done done;
    bool finished = false;
  };

  std::string provider() const override { return "scripted"; }
  std::string model() const override { return "scripted-model"; }
  int max_samples_per_call() const override { return 8; }
  std::string params_json(const ChatRequest&) const override { return "{}"; }
  void start(const ProviderCall& call, Done done) override {
    started.push_back(Started{call, std::move(done), false});
    max_in_flight = std::max(max_in_flight, in_flight());
  }

  // Answers call `i` with one completion per sample it asked for: "<prompt> #<index>".
  void answer(size_t i, const std::string& finish_reason = "stop") {
    CallResult r;
    for (int index : started.at(i).call.sample_indices)
      r.completions.push_back(Completion{
          started[i].call.request.user_prompt + " #" + std::to_string(index), finish_reason,
          finish_reason == "length"});
    r.usage.prompt_tokens = 10;
    r.usage.completion_tokens = 5;
    r.model = model();
    finish(i, CallOutcome{std::move(r), std::nullopt});
  }
  void fail(size_t i, ProviderError error) {
    finish(i, CallOutcome{std::nullopt, std::move(error)});
  }

  int in_flight() const {
    return static_cast<int>(std::count_if(started.begin(), started.end(),
                                          [](const Started& s) { return !s.finished; }));
  }

  std::vector<Started> started;
  int max_in_flight = 0;

 private:
  void finish(size_t i, CallOutcome outcome) {
    Started& s = started.at(i);
    if (s.finished) {
      ADD_FAILURE() << "call " << i << " was already finished (no new attempt started?)";
      return;
    }
    s.finished = true;
    s.done(std::move(outcome));  // a message to the gateway: the test's run() delivers it
  }
};

}  // namespace palladium::testing
