// agent/judge_process through a fake sandbox::ProcessLauncher: what it asks the launcher for,
// and its pipe, with the test playing the judge on the child's fds (no Python started).

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include "agent/judge_process.hpp"
#include "protocol/field_codec.hpp"
#include "tests/agent/fake_judge_options.hpp"
#include "tests/agent/test_support.hpp"
#include "tests/sandbox/fake_process_launcher.hpp"

namespace palladium::agent {
namespace {

using sandbox::testing::FakeProcessLauncher;

class JudgeProcessLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("judge-launch");
    options_ = testing::fake_judge_options(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string dir_;
  JudgeOptions options_;
  std::shared_ptr<FakeProcessLauncher> launcher_ = std::make_shared<FakeProcessLauncher>();
};

bool has(const std::vector<std::string>& v, const std::string& entry) {
  return std::find(v.begin(), v.end(), entry) != v.end();
}

TEST_F(JudgeProcessLaunchTest, TheJudgeIsLaunchedWithItsCommandEnvironmentFdsAndLimits) {
  ::setenv("PALLADIUM_TEST_API_KEY", "s3cret", 1);
  JudgeProcess judge(options_, launcher_);
  ASSERT_EQ(judge.start(), "");
  ::unsetenv("PALLADIUM_TEST_API_KEY");
  ASSERT_EQ(launcher_->launched.size(), 1u);
  const sandbox::LaunchSpec& spec = launcher_->launched[0];
  EXPECT_EQ(spec.argv, (std::vector<std::string>{options_.python, "-m", testing::kFakeModule,
                                                 "--backend", "interpret"}));
  EXPECT_TRUE(has(spec.env, "PYTHONPATH=" + options_.home));
  EXPECT_TRUE(has(spec.env, "TMPDIR=" + spec.cwd));
  for (const std::string& e : spec.env) EXPECT_EQ(e.find("s3cret"), std::string::npos) << e;
  EXPECT_EQ(spec.fds.size(), 2u);  // requests on 3, responses on 4
  sandbox::ChildLimits want = effective_limits(options_.limits, "interpret");
  EXPECT_EQ(spec.limits.address_space_bytes, want.address_space_bytes);
  EXPECT_EQ(spec.limits.cpu_seconds, want.cpu_seconds);
  EXPECT_GT(spec.limits.cpu_seconds, 0);
  EXPECT_TRUE(judge.running());
  pid_t pid = judge.pid();
  judge.kill();
  EXPECT_FALSE(judge.running());
  EXPECT_EQ(judge.exit_description(), "killed by signal 9 (Killed)");
  EXPECT_NE(::kill(pid, 0), 0);  // reaped, not a zombie
}

TEST_F(JudgeProcessLaunchTest, FramesCrossThePipesTheLauncherWasGiven) {
  JudgeProcess judge(options_, launcher_);
  ASSERT_EQ(judge.start(), "");
  int requests = launcher_->child_fds[0][0], responses = launcher_->child_fds[0][1];

  judge_pipe::Ready ready;
  ready.pid = 4242;
  ready.jax_version = "0.0-launch";
  ready.device_kind = "cpu";
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  codec::pack_message(pk, ready);
  ASSERT_EQ(::write(responses, buf.data(), buf.size()), static_cast<ssize_t>(buf.size()));
  auto got = judge.wait_ready(std::chrono::seconds(5));
  ASSERT_TRUE(std::holds_alternative<JudgeReady>(got)) << std::get<std::string>(got);
  EXPECT_EQ(std::get<JudgeReady>(got).jax_version, "0.0-launch");
  EXPECT_EQ(std::get<JudgeReady>(got).pid, 4242);

  wire::Job job{17, 0, "8p", "code", "full", 30.0, {0}, true, {}};
  ASSERT_EQ(judge.send_eval(job), "");
  char raw[4096];
  ssize_t n = ::read(requests, raw, sizeof raw);
  ASSERT_GT(n, 0);
  msgpack::object_handle oh = msgpack::unpack(raw, static_cast<std::size_t>(n));
  auto map = oh.get().as<std::map<std::string, msgpack::object>>();
  EXPECT_EQ(map.at("type").as<std::string>(), "eval");
  EXPECT_EQ(map.at("job_id").as<int64_t>(), 17);

  launcher_->close_child_fd(0, 1);  // the judge closes its response pipe: EOF
  auto events = judge.read_available();
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<JudgeEof>(events.back()));
}

TEST_F(JudgeProcessLaunchTest, ALaunchFailureIsStartsErrorAndLeavesNothingRunning) {
  launcher_->fail_with = "No such file or directory";
  JudgeProcess judge(options_, launcher_);
  EXPECT_EQ(judge.start(), "spawn " + options_.python + ": No such file or directory");
  EXPECT_FALSE(judge.running());
  EXPECT_EQ(judge.response_fd(), -1);
}

}  // namespace
}  // namespace palladium::agent
