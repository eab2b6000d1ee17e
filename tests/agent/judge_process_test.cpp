#include "agent/judge_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include <poll.h>

#include "tests/agent/fake_judge_options.hpp"
#include "tests/agent/test_support.hpp"

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;

class JudgeProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("judge-test");
    options_ = testing::fake_judge_options(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static wire::Job job(int64_t id, std::string code, double timeout_s = 30.0) {
    return wire::Job{id, 0, "8p", std::move(code), "full", timeout_s, {0, 1}, true, {}};
  }

  void start_ready(JudgeProcess& sp) {
    ASSERT_EQ(sp.start(), "");
    auto ready = sp.wait_ready(60s);
    ASSERT_TRUE(std::holds_alternative<JudgeReady>(ready)) << std::get<std::string>(ready);
    EXPECT_EQ(std::get<JudgeReady>(ready).jax_version, "0.0-fake");
    EXPECT_EQ(std::get<JudgeReady>(ready).device_kind, "cpu");
    EXPECT_EQ(std::get<JudgeReady>(ready).pid, sp.pid());
    EXPECT_EQ(std::get<JudgeReady>(ready).libtpu_version, "0.0.0-fake");
    EXPECT_EQ(std::get<JudgeReady>(ready).stages.size(), 3u);
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
  JudgeOptions options_;
};

TEST_F(JudgeProcessTest, ResultRoundTrip) {
  JudgeProcess sp(options_);
  start_ready(sp);
  JudgeResult judged = sp.evaluate(job(7, "def workload(a, b): return a @ b"));
  const Evaluation& r = judged.evaluation;
  EXPECT_EQ(judged.job_id, 7);
  EXPECT_EQ(r.verdict, Verdict::correct);
  EXPECT_EQ(r.stage, Stage::done);
  EXPECT_EQ(r.stage_ms.at("numerics"), 2.0);
  EXPECT_EQ(r.max_abs_err, 0.0);
  EXPECT_FALSE(r.max_rel_err.has_value());
  EXPECT_EQ(r.kernel_ms, 0.25);
  EXPECT_EQ(r.timing_kind, TimingKind::cpu_wall);
  // A second job on the same process.
  EXPECT_EQ(sp.evaluate(job(8, "x")).evaluation.verdict, Verdict::correct);

  pid_t pid = sp.pid();
  sp.stop();
  EXPECT_FALSE(sp.running());
  EXPECT_EQ(sp.exit_description(), "exit status 0");  // left on shutdown, not killed
  expect_reaped(pid);
}

// A re-timing job goes to the judge as a `retime` with its codes and comes back as the sitting
// (the fake judge times each code at its RETIME_MS, against a 5 ms baseline).
TEST_F(JudgeProcessTest, ARetimingJobIsSentAsRetimeAndAnsweredWithTheSitting) {
  JudgeProcess sp(options_);
  start_ready(sp);
  wire::Job j = job(-21, "");
  j.codes = {"# RETIME_MS=3.0", "# RETIME_MS=1.5"};
  ASSERT_EQ(sp.send_retime(j), "");
  std::optional<JudgeRetimed> got;
  for (int i = 0; i < 200 && !got; ++i) {
    pollfd p{sp.response_fd(), POLLIN, 0};
    ::poll(&p, 1, 50);
    for (JudgeEvent& ev : sp.read_available()) {
      ASSERT_FALSE(std::holds_alternative<JudgeEof>(ev)) << sp.log_tail();
      if (auto* r = std::get_if<JudgeRetimed>(&ev)) got = std::move(*r);
    }
  }
  ASSERT_TRUE(got.has_value()) << sp.log_tail();
  EXPECT_EQ(got->job_id, -21);
  EXPECT_EQ(got->kernel_ms, (std::vector<double>{3.0, 1.5}));
  EXPECT_EQ(got->kernel_ms_low.size(), 2u);
  EXPECT_EQ(got->baseline_ms, 5.0);
  EXPECT_EQ(got->timing_kind, TimingKind::cpu_wall);
  EXPECT_EQ(got->error, "");
  // The same process then evaluates as before.
  EXPECT_EQ(sp.evaluate(job(22, "x")).evaluation.verdict, Verdict::correct);
  sp.stop();
}

TEST_F(JudgeProcessTest, TimeoutKillsGroupWithoutZombieAndRestarts) {
  JudgeProcess sp(options_);
  start_ready(sp);
  pid_t pid = sp.pid();
  auto t0 = std::chrono::steady_clock::now();
  JudgeResult judged = sp.evaluate(job(9, "SLEEP_FOREVER", 1.0));
  const Evaluation& r = judged.evaluation;
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(judged.job_id, 9);
  EXPECT_EQ(r.verdict, Verdict::timeout);
  EXPECT_NE(r.error.find("timeout_s=1 s"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("killed"), std::string::npos) << r.error;
  EXPECT_LT(waited, 10s);
  EXPECT_FALSE(sp.running());
  EXPECT_NE(sp.exit_description().find("signal 9"), std::string::npos);
  expect_reaped(pid);

  // The grandchild in the judge's process group died with it.
  std::smatch m;
  std::string log = sp.log_tail();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("grandchild pid (\\d+)"))) << log;
  pid_t grandchild = std::stoi(m[1]);
  for (int i = 0; i < 100 && !gone(grandchild); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(gone(grandchild));

  // Restart: a fresh child serves the next job.
  start_ready(sp);
  EXPECT_NE(sp.pid(), pid);
  EXPECT_EQ(sp.evaluate(job(10, "ok")).evaluation.verdict, Verdict::correct);
}

TEST_F(JudgeProcessTest, CrashIsDetectedWithStatusAndLogTail) {
  JudgeProcess sp(options_);
  start_ready(sp);
  pid_t pid = sp.pid();
  JudgeResult judged = sp.evaluate(job(11, "EXIT_ABRUPTLY"));
  const Evaluation& r = judged.evaluation;
  EXPECT_EQ(r.verdict, Verdict::crash);
  EXPECT_NE(r.error.find("exit status 3"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("dying abruptly"), std::string::npos) << r.error;
  EXPECT_NE(r.error_signature.find("crash"), std::string::npos);
  expect_reaped(pid);
}

TEST_F(JudgeProcessTest, StdoutNoiseDoesNotCorruptTheProtocol) {
  JudgeProcess sp(options_);
  start_ready(sp);
  JudgeResult judged = sp.evaluate(job(12, "PRINT_NOISE"));
  const Evaluation& r = judged.evaluation;
  EXPECT_EQ(r.verdict, Verdict::correct) << r.error;
  EXPECT_EQ(r.stdout_text, "captured candidate output\n");
  EXPECT_EQ(sp.evaluate(job(13, "ok")).evaluation.verdict, Verdict::correct);
  EXPECT_NE(sp.log_tail().find("noise on stderr"), std::string::npos);
}

TEST_F(JudgeProcessTest, EnvironmentIsScrubbedAndCwdIsPrivate) {
  ::setenv("PALLADIUM_TEST_API_KEY", "sk-should-not-leak", 1);
  ::setenv("SOME_Token_VALUE", "t", 1);
  ::setenv("PALLADIUM_TEST_VISIBLE", "v", 1);
  ::setenv("JAX_PALLADIUM_TEST", "j", 1);
  ::setenv("TPU_PALLADIUM_TEST_TOKEN", "t", 1);
  const char* timing_runs = std::getenv("PALLADIUM_TIMING_RUNS");
  const std::string saved_timing_runs = timing_runs ? timing_runs : "";
  ::setenv("PALLADIUM_TIMING_RUNS", "7", 1);
  JudgeProcess sp(options_);
  start_ready(sp);
  if (saved_timing_runs.empty()) {
    ::unsetenv("PALLADIUM_TIMING_RUNS");
  } else {
    ::setenv("PALLADIUM_TIMING_RUNS", saved_timing_runs.c_str(), 1);
  }
  for (const char* name : {"PALLADIUM_TEST_API_KEY", "SOME_Token_VALUE", "PALLADIUM_TEST_VISIBLE",
                           "JAX_PALLADIUM_TEST", "TPU_PALLADIUM_TEST_TOKEN"}) {
    ::unsetenv(name);
  }
  JudgeResult judged = sp.evaluate(job(14, "ECHO_ENV"));
  const Evaluation& r = judged.evaluation;
  ASSERT_EQ(r.verdict, Verdict::correct) << r.error;
  // An allowlist: only what the judge needs passes, and never a credential-like name.
  EXPECT_EQ(r.stdout_text.find("PALLADIUM_TEST_API_KEY"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("SOME_Token_VALUE"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("PALLADIUM_TEST_VISIBLE"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("TPU_PALLADIUM_TEST_TOKEN"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("JAX_PALLADIUM_TEST"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("PALLADIUM_SANDBOX"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("PALLADIUM_TIMING_RUNS"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("PYTHONPATH=" + options_.home), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.stdout_text, m, std::regex("cwd=(\\S+)")));
  std::string cwd = m[1];
  EXPECT_NE(cwd.find("palladium-judge-"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(cwd));
  sp.stop();
  EXPECT_FALSE(std::filesystem::exists(cwd)) << "private cwd not removed";
}

TEST_F(JudgeProcessTest, OneChipEnvironmentReachesTheChild) {
  options_.extra_env = one_chip_environment(3);
  JudgeProcess sp(options_);
  ASSERT_EQ(sp.start(), "");
  ASSERT_TRUE(std::holds_alternative<JudgeReady>(sp.wait_ready(60s)));
  JudgeResult judged = sp.evaluate(job(15, "ECHO_ENV"));
  const Evaluation& r = judged.evaluation;
  ASSERT_EQ(r.verdict, Verdict::correct) << r.error;
  EXPECT_NE(r.stdout_text.find("TPU_VISIBLE_CHIPS=3"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("TPU_CHIPS_PER_PROCESS_BOUNDS=1,1,1"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("TPU_PROCESS_PORT=8479"), std::string::npos) << "distinct port per chip";
  sp.stop();
}

TEST_F(JudgeProcessTest, TpuBackendRefusalIsReported) {
  options_.backend = "tpu";
  JudgeProcess sp(options_);
  ASSERT_EQ(sp.start(), "");
  auto ready = sp.wait_ready(60s);
  ASSERT_TRUE(std::holds_alternative<std::string>(ready));
  const std::string& error = std::get<std::string>(ready);
  EXPECT_NE(error.find("exit status 2"), std::string::npos) << error;
  EXPECT_NE(error.find("no TPU device"), std::string::npos) << error;
  EXPECT_FALSE(sp.running());
}

TEST_F(JudgeProcessTest, MissingPythonFailsToStart) {
  options_.python = "/nonexistent/python";
  JudgeProcess sp(options_);
  std::string error = sp.start();
  EXPECT_NE(error.find("/nonexistent/python"), std::string::npos) << error;
  EXPECT_FALSE(sp.running());
}


// -- sandbox (docs/verification.md "Sandbox") ---------------------------------------------

std::string line_value(const std::string& text, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("(^|\n)" + key + "=([^\n]*)"))) return "<missing>";
  return m[2];
}

TEST_F(JudgeProcessTest, SandboxLimitsNamespaceAndFdsAreApplied) {
  options_.limits.address_space_mb = 6000;
  options_.limits.cpu_seconds = 3600;
  options_.limits.file_size_mb = 64;
  ::setenv("PALLADIUM_JUDGE_NOFILE", "77", 1);  // run-time override of one limit
  // An fd the agent leaks without close-on-exec must not reach the judge.
  int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  JudgeProcess sp(options_);
  start_ready(sp);
  ::unsetenv("PALLADIUM_JUDGE_NOFILE");
  JudgeResult judged = sp.evaluate(job(20, "ECHO_LIMITS"));
  const Evaluation& r = judged.evaluation;
  ::close(leaked);
  ASSERT_EQ(r.verdict, Verdict::correct) << r.error;
  const std::string& out = r.stdout_text;
  EXPECT_EQ(line_value(out, "AS"), std::to_string(6000LL << 20) + "/" + std::to_string(6000LL << 20));
  EXPECT_EQ(line_value(out, "CPU"), "3600/3630");
  EXPECT_EQ(line_value(out, "FSIZE"), std::to_string(64LL << 20) + "/" + std::to_string(64LL << 20));
  EXPECT_EQ(line_value(out, "NOFILE"), "77/77");
  EXPECT_EQ(line_value(out, "CORE"), "0/0");
  // 0,1,2 + the two protocol pipes + the fd listdir itself opened; nothing of the agent's.
  std::string fds = line_value(out, "fds");
  EXPECT_EQ(fds.rfind("0,1,2,3,4", 0), 0u) << fds;
  EXPECT_EQ(std::count(fds.begin(), fds.end(), ','), 5) << fds;
  EXPECT_NE(line_value(out, "TMPDIR").find("palladium-judge-"), std::string::npos);
  if (::geteuid() == 0) {
    EXPECT_EQ(line_value(out, "net"), "lo") << "no network namespace";
  }
}

TEST(JudgeProcessLimitsTest, DefaultsAndOverrides) {
  JudgeLimits defaults;
  EffectiveLimits e = effective_limits(defaults, "interpret");
  EXPECT_GE(e.address_space_bytes, 8192LL << 20);
  EXPECT_EQ(e.cpu_seconds, 14400);
  EXPECT_EQ(e.file_size_bytes, 1024LL << 20);
  EXPECT_EQ(e.open_files, 1024);
  EXPECT_EQ(effective_limits(defaults, "tpu").address_space_bytes, -1);  // libtpu: unlimited
  JudgeLimits off;
  off.address_space_mb = -1;
  EXPECT_EQ(effective_limits(off, "interpret").address_space_bytes, -1);
  ::setenv("PALLADIUM_JUDGE_AS_MB", "5000", 1);
  EXPECT_EQ(effective_limits(defaults, "tpu").address_space_bytes, 5000LL << 20);
  ::unsetenv("PALLADIUM_JUDGE_AS_MB");
}

// The real Python judge under the agent's JudgeProcess: every escape attempt gets its
// verdict, nothing is left behind, and the next candidate evaluates normally.
class JudgeProcessRealSandboxTest : public JudgeProcessTest {
 protected:
  void SetUp() override {
    JudgeProcessTest::SetUp();
    options_.home = PALLADIUM_SOURCE_DIR;
    options_.module = "judge";
    if (::access((std::string(PALLADIUM_SOURCE_DIR) + "/.venv/bin/python").c_str(), X_OK) != 0) {
      GTEST_SKIP() << "needs the repo's .venv (JAX)";
    }
  }

  static std::vector<pid_t> children(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    std::vector<pid_t> out;
    pid_t child;
    while (in >> child) out.push_back(child);
    return out;
  }

  Evaluation run(JudgeProcess& sp, int64_t id, const std::string& code, double timeout_s = 240) {
    wire::Job j{id, 0, "8p", code, "full", timeout_s, {3, 4}, true, {}};
    return sp.evaluate(j).evaluation;
  }

  void start_real(JudgeProcess& sp) {
    ASSERT_EQ(sp.start(), "");
    auto ready = sp.wait_ready(240s);
    ASSERT_TRUE(std::holds_alternative<JudgeReady>(ready)) << std::get<std::string>(ready);
  }
};


// __import__ without naming it: gets past lint, not past the audit hook.
const char* kSneakyImport =
    "import glob as _g\n"
    "_imp = vars(getattr(_g, 'o' + 's').sys.modules['builtins'])['__imp' + 'ort__']\n";

TEST_F(JudgeProcessRealSandboxTest, EscapesGetTheirVerdictsAndTheNextCandidateIsFine) {
  options_.limits.address_space_mb = 4096;  // measured peak 1.6 GiB; 6 GiB must not fit
  JudgeProcess sp(options_);
  start_real(sp);
  pid_t first_pid = sp.pid();

  // Fork, visible to lint.
  Evaluation r = run(sp, 1, std::string("import os\nos.fork()\n") + testing::kGemm);
  EXPECT_EQ(r.verdict, Verdict::lint_rejected) << r.error;

  // Fork past lint: refused by the audit hook, no child process.
  r = run(sp, 2, std::string(testing::kGemm) + kSneakyImport + "_imp('os').fork()\n");
  EXPECT_EQ(r.verdict, Verdict::runtime_error) << r.error;
  EXPECT_NE(r.error.find("sandbox: os.fork"), std::string::npos) << r.error;
  // The judge's children are its candidate sandbox (bwrap) and its compile process; nothing
  // the candidate forked.
  std::vector<std::string> kinds;
  for (pid_t kid : children(sp.pid())) {
    std::ifstream in("/proc/" + std::to_string(kid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    kinds.push_back(cmdline.find("compile_worker") != std::string::npos ? "compile_worker"
                    : cmdline.find("bwrap") != std::string::npos        ? "bwrap"
                                                                        : cmdline);
  }
  std::sort(kinds.begin(), kinds.end());
  EXPECT_EQ(kinds, (std::vector<std::string>{"bwrap", "compile_worker"}));

  // Write outside the private dir (numpy, which lint does not know about).
  std::string target = dir_ + "/escaped.npy";
  r = run(sp, 3, std::string(testing::kGemm) + "import numpy as _np\n_np.save('" + target +
                     "', _np.zeros(3))\n");
  EXPECT_EQ(r.verdict, Verdict::runtime_error) << r.error;
  EXPECT_FALSE(std::filesystem::exists(target));

  // 6 GiB of address space under a 4 GiB RLIMIT_AS (np.empty never touches it, so without the
  // limit this would pass harmlessly instead of exhausting the host).
  r = run(sp, 4, std::string(testing::kGemm) + "import numpy as _np\n_b = _np.empty((6 << 30,), _np.uint8)\n");
  EXPECT_EQ(r.verdict, Verdict::resource_exhausted) << r.error;

  // The same process still evaluates a correct kernel.
  r = run(sp, 5, testing::kGemm);
  EXPECT_EQ(r.verdict, Verdict::correct) << spelling(r.stage) << ": " << r.error;
  EXPECT_EQ(sp.pid(), first_pid);

  // Spin forever: the judge's own deadline (a share of timeout_s) kills the candidate's whole
  // sandbox and reports timeout; the judge itself lives on.
  r = run(sp, 6, std::string(testing::kGemm) + "while True:\n    pass\n", 20.0);
  EXPECT_EQ(r.verdict, Verdict::timeout) << r.error;
  EXPECT_EQ(r.stage, Stage::import);
  EXPECT_TRUE(sp.running());
  EXPECT_EQ(sp.pid(), first_pid);

  // Segfault: the candidate's crash, with the signal in the error; the judge lives on.
  r = run(sp, 7, std::string(testing::kGemm) + "import faulthandler\nfaulthandler._sigsegv()\n");
  EXPECT_EQ(r.verdict, Verdict::crash) << r.error;
  EXPECT_NE(r.error.find("SIGSEGV"), std::string::npos) << r.error;
  EXPECT_EQ(sp.pid(), first_pid);

  // The same judge evaluates the next candidate normally, in a fresh sandbox after the timeout.
  r = run(sp, 8, testing::kGemm);
  EXPECT_EQ(r.verdict, Verdict::correct) << spelling(r.stage) << ": " << r.error;
  sp.stop();
  EXPECT_FALSE(std::filesystem::exists(target));
}

}  // namespace
}  // namespace palladium::agent
