// What a local agent inherits: only the allowlisted environment, never an API key.
#include "coordinator/local_agents.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(LocalAgentsTest, TheEnvironmentIsAnAllowlist) {
  std::string vars[] = {"PATH=/usr/bin",          "HOME=/root",
                        "OPENAI_API_KEY=sk-123",  "GEMINI_API_KEY=g",
                        "AWS_SECRET_ACCESS_KEY=x", "PALLADIUM_PYTHON=/venv/bin/python",
                        "LC_ALL=C.UTF-8",         "MY_PASSWORD=hunter2",
                        "GOOGLE_APPLICATION_CREDENTIALS=/creds.json"};
  std::vector<char*> env;
  for (auto& v : vars) env.push_back(v.data());
  env.push_back(nullptr);
  auto out = agent_environment(env.data());
  EXPECT_EQ(out, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/root",
                                           "PALLADIUM_PYTHON=/venv/bin/python", "LC_ALL=C.UTF-8"}));
}

}  // namespace
}  // namespace palladium
