#include "tpu_agent/sidecar_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "tests/tpu_agent/test_support.hpp"

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;

class SidecarProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sidecar-test");
    options_.python = testing::test_python();
    options_.home = testing::fake_home();
    options_.module = testing::kFakeModule;
    options_.backend = "interpret";
    options_.log_path = dir_ + "/sidecar.log";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static wire::Job job(int64_t id, std::string code, double timeout_s = 30.0) {
    return wire::Job{id, "8p", std::move(code), "full", timeout_s, {0, 1}};
  }

  void start_ready(SidecarProcess& sp) {
    ASSERT_EQ(sp.start(), "");
    auto ready = sp.wait_ready(60s);
    ASSERT_TRUE(std::holds_alternative<SidecarReady>(ready)) << std::get<std::string>(ready);
    EXPECT_EQ(std::get<SidecarReady>(ready).jax_version, "0.0-fake");
    EXPECT_EQ(std::get<SidecarReady>(ready).device_kind, "cpu");
    EXPECT_EQ(std::get<SidecarReady>(ready).pid, sp.pid());
  }

  // True when `pid` is neither our child nor alive (a zombie of another parent counts as dead).
  static bool gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
  }

  static void expect_reaped(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, WNOHANG), -1) << "child " << pid << " not reaped";
    EXPECT_EQ(errno, ECHILD);
    EXPECT_TRUE(gone(pid));
  }

  std::string dir_;
  SidecarOptions options_;
};

TEST_F(SidecarProcessTest, ResultRoundTrip) {
  SidecarProcess sp(options_);
  start_ready(sp);
  wire::Result r = sp.evaluate(job(7, "def workload(a, b): return a @ b"));
  EXPECT_EQ(r.job_id, 7);
  EXPECT_EQ(r.verdict, "correct");
  EXPECT_EQ(r.stage, "done");
  EXPECT_EQ(r.stage_ms.at("numerics"), 2.0);
  EXPECT_EQ(r.max_abs_err, 0.0);
  EXPECT_FALSE(r.max_rel_err.has_value());
  EXPECT_EQ(r.kernel_ms, 0.25);
  EXPECT_EQ(r.timing_kind, "cpu-wall");
  // A second job on the same process.
  EXPECT_EQ(sp.evaluate(job(8, "x")).verdict, "correct");

  pid_t pid = sp.pid();
  sp.stop();
  EXPECT_FALSE(sp.running());
  EXPECT_EQ(sp.exit_description(), "exit status 0");  // left on shutdown, not killed
  expect_reaped(pid);
}

TEST_F(SidecarProcessTest, TimeoutKillsGroupWithoutZombieAndRestarts) {
  SidecarProcess sp(options_);
  start_ready(sp);
  pid_t pid = sp.pid();
  auto t0 = std::chrono::steady_clock::now();
  wire::Result r = sp.evaluate(job(9, "SLEEP_FOREVER", 1.0));
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.job_id, 9);
  EXPECT_EQ(r.verdict, "timeout");
  EXPECT_NE(r.error.find("timeout_s=1 s"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("killed"), std::string::npos) << r.error;
  EXPECT_LT(waited, 10s);
  EXPECT_FALSE(sp.running());
  EXPECT_NE(sp.exit_description().find("signal 9"), std::string::npos);
  expect_reaped(pid);

  // The grandchild in the sidecar's process group died with it.
  std::smatch m;
  std::string log = sp.log_tail();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("grandchild pid (\\d+)"))) << log;
  pid_t grandchild = std::stoi(m[1]);
  for (int i = 0; i < 100 && !gone(grandchild); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(gone(grandchild));

  // Restart: a fresh child serves the next job.
  start_ready(sp);
  EXPECT_NE(sp.pid(), pid);
  EXPECT_EQ(sp.evaluate(job(10, "ok")).verdict, "correct");
}

TEST_F(SidecarProcessTest, CrashIsDetectedWithStatusAndLogTail) {
  SidecarProcess sp(options_);
  start_ready(sp);
  pid_t pid = sp.pid();
  wire::Result r = sp.evaluate(job(11, "EXIT_ABRUPTLY"));
  EXPECT_EQ(r.verdict, "crash");
  EXPECT_NE(r.error.find("exit status 3"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("dying abruptly"), std::string::npos) << r.error;
  EXPECT_NE(r.error_signature.find("crash"), std::string::npos);
  expect_reaped(pid);
}

TEST_F(SidecarProcessTest, StdoutNoiseDoesNotCorruptTheProtocol) {
  SidecarProcess sp(options_);
  start_ready(sp);
  wire::Result r = sp.evaluate(job(12, "PRINT_NOISE"));
  EXPECT_EQ(r.verdict, "correct") << r.error;
  EXPECT_EQ(r.stdout_text, "captured candidate output\n");
  EXPECT_EQ(sp.evaluate(job(13, "ok")).verdict, "correct");
  EXPECT_NE(sp.log_tail().find("noise on stderr"), std::string::npos);
}

TEST_F(SidecarProcessTest, EnvironmentIsScrubbedAndCwdIsPrivate) {
  ::setenv("PALLADIUM_TEST_API_KEY", "sk-should-not-leak", 1);
  ::setenv("SOME_Token_VALUE", "t", 1);
  ::setenv("PALLADIUM_TEST_VISIBLE", "v", 1);
  SidecarProcess sp(options_);
  start_ready(sp);
  ::unsetenv("PALLADIUM_TEST_API_KEY");
  ::unsetenv("SOME_Token_VALUE");
  ::unsetenv("PALLADIUM_TEST_VISIBLE");
  wire::Result r = sp.evaluate(job(14, "ECHO_ENV"));
  ASSERT_EQ(r.verdict, "correct") << r.error;
  EXPECT_EQ(r.stdout_text.find("PALLADIUM_TEST_API_KEY"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("SOME_Token_VALUE"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("PALLADIUM_TEST_VISIBLE"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("PYTHONPATH=" + options_.home), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.stdout_text, m, std::regex("cwd=(\\S+)")));
  std::string cwd = m[1];
  EXPECT_NE(cwd.find("palladium-sidecar-"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(cwd));
  sp.stop();
  EXPECT_FALSE(std::filesystem::exists(cwd)) << "private cwd not removed";
}

TEST_F(SidecarProcessTest, TpuBackendRefusalIsReported) {
  options_.backend = "tpu";
  SidecarProcess sp(options_);
  ASSERT_EQ(sp.start(), "");
  auto ready = sp.wait_ready(60s);
  ASSERT_TRUE(std::holds_alternative<std::string>(ready));
  const std::string& error = std::get<std::string>(ready);
  EXPECT_NE(error.find("exit status 2"), std::string::npos) << error;
  EXPECT_NE(error.find("no TPU device"), std::string::npos) << error;
  EXPECT_FALSE(sp.running());
}

TEST_F(SidecarProcessTest, MissingPythonFailsToStart) {
  options_.python = "/nonexistent/python";
  SidecarProcess sp(options_);
  std::string error = sp.start();
  EXPECT_NE(error.find("/nonexistent/python"), std::string::npos) << error;
  EXPECT_FALSE(sp.running());
}

}  // namespace
}  // namespace palladium::agent
