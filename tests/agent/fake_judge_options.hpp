// The fake judge's JudgeOptions, for the agent tests that start a JudgeProcess. Apart from
// test_support.hpp so that tests without the agent library (the sandbox's) need not see the
// generated judge pipe.

#ifndef PALLADIUM_TESTS_AGENT_FAKE_JUDGE_OPTIONS_HPP_
#define PALLADIUM_TESTS_AGENT_FAKE_JUDGE_OPTIONS_HPP_

#include <string>

#include "agent/judge_process.hpp"
#include "tests/agent/test_support.hpp"

namespace palladium::agent::testing {

// A JudgeProcess running the fake judge on the interpret backend, logging into `dir`.
inline JudgeOptions fake_judge_options(const std::string& dir) {
  JudgeOptions o;
  o.python = test_python();
  o.home = fake_home();
  o.module = kFakeModule;
  o.backend = "interpret";
  o.log_path = dir + "/judge.log";
  return o;
}

}  // namespace palladium::agent::testing

#endif  // PALLADIUM_TESTS_AGENT_FAKE_JUDGE_OPTIONS_HPP_
