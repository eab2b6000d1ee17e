#include "agent/judge_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "protocol/taxonomy.hpp"
#include "agent/secret_scrubber.hpp"

extern char** environ;

namespace palladium::agent {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

}  // namespace

bool judge_environment_variable(const std::string& name) {
  if (secret_variable_name(name)) return false;
  static const char* const kExact[] = {
      "PATH", "LANG", "LANGUAGE", "TZ", "HOME", "USER", "LOGNAME", "XDG_CACHE_HOME",
      "PALLADIUM_JUDGE_CACHE", "PALLADIUM_SANDBOX", "PALLADIUM_SANDBOX_CGROUP",
      "PALLADIUM_COMPILE_TIER",
      "PALLADIUM_COMPILE_MEMORY_MB", "PALLADIUM_FULL_SHAPES", "PALLADIUM_TIMING_RUNS", "XLA_FLAGS",
      "LIBTPU_INIT_ARGS", "ALLOW_MULTIPLE_LIBTPU_LOAD", "TF_CPP_MIN_LOG_LEVEL",
      "PYTHONDONTWRITEBYTECODE"};
  for (const char* exact : kExact) {
    if (name == exact) return true;
  }
  for (const char* prefix : {"LC_", "JAX_", "TPU_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> one_chip_environment(int chip) {
  // A distinct port per process: libtpu's processes on one host would otherwise collide.
  const std::string port = std::to_string(8476 + chip);
  return {"TPU_CHIPS_PER_PROCESS_BOUNDS=1,1,1", "TPU_PROCESS_BOUNDS=1,1,1",
          "TPU_VISIBLE_CHIPS=" + std::to_string(chip), "TPU_PROCESS_PORT=" + port,
          "TPU_MESH_CONTROLLER_ADDRESS=localhost:" + port, "TPU_MESH_CONTROLLER_PORT=" + port};
}

namespace {

// An allowlist: what the judge needs and nothing else of the agent's (its keys above all).
std::vector<std::string> child_environment(const JudgeOptions& o, const std::string& temp_dir) {
  std::vector<std::string> env;
  bool sandbox_named = false;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (!judge_environment_variable(name)) continue;
    sandbox_named = sandbox_named || name == "PALLADIUM_SANDBOX";
    env.push_back(std::move(entry));
  }
  if (!sandbox_named) env.push_back(std::string("PALLADIUM_SANDBOX=") + PALLADIUM_SANDBOX_BIN);
  env.push_back("PYTHONPATH=" + o.home);
  env.push_back("PALLADIUM_HOME=" + o.home);
  env.push_back("PYTHONUNBUFFERED=1");
  env.push_back("TMPDIR=" + temp_dir);
  for (const auto& e : o.extra_env) env.push_back(e);
  return env;
}

// An environment override of one limit: unset -> `fallback`.
int64_t env_limit(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long parsed = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<int64_t>(parsed) : fallback;
}

// 0 -> `def`, -1 (or any negative) -> -1 (unchanged), else the value times `unit`.
int64_t resolve_limit(int64_t value, int64_t def, int64_t unit) {
  if (value == 0) value = def;
  if (value < 0) return -1;
  return value * unit;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  return "status " + std::to_string(status);
}

// Writes all of `data` to the non-blocking fd `fd`, waiting at most until `deadline`.
std::string write_all(int fd, const std::string& data, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return errno_text("write to judge", errno);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return "judge did not read its request pipe in time";
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
  return "";
}

}  // namespace

JudgeProcess::JudgeProcess(JudgeOptions options,
                           std::shared_ptr<sandbox::ProcessLauncher> launcher)
    : options_(std::move(options)),
      launcher_(launcher ? std::move(launcher)
                         : std::make_shared<sandbox::SandboxedLauncher>()) {
  ::signal(SIGPIPE, SIG_IGN);
}

JudgeProcess::~JudgeProcess() { kill(); }

std::string JudgeProcess::start() {
  if (running()) return "judge already running (pid " + std::to_string(pid_) + ")";
  exit_description_.clear();

  std::error_code ec;
  std::filesystem::path tmp_root = std::filesystem::temp_directory_path(ec);
  if (ec) tmp_root = "/tmp";
  std::string templ = (tmp_root / "palladium-judge-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return errno_text("mkdtemp", errno);
  temp_dir_ = templ;

  int log_fd = ::open(options_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    std::string err = errno_text(("open log " + options_.log_path).c_str(), errno);
    kill();
    return err;
  }
  struct stat st {};
  log_start_ = ::fstat(log_fd, &st) == 0 ? static_cast<long>(st.st_size) : 0;

  int req[2], resp[2];
  if (::pipe2(req, O_CLOEXEC) != 0) {
    ::close(log_fd);
    kill();
    return errno_text("pipe2", errno);
  }
  if (::pipe2(resp, O_CLOEXEC) != 0) {
    ::close(log_fd);
    ::close(req[0]);
    ::close(req[1]);
    kill();
    return errno_text("pipe2", errno);
  }
  req_fd_ = req[1];
  resp_fd_ = resp[0];

  sandbox::LaunchSpec spec;
  spec.executable = options_.python;
  spec.argv = {options_.python, "-m", options_.module, "--backend", options_.backend};
  spec.env = child_environment(options_, temp_dir_);
  spec.cwd = temp_dir_;
  spec.output_fd = log_fd;
  spec.fds = {req[0], resp[1]};
  spec.limits = effective_limits(options_.limits, options_.backend);
  std::string launch_error;
  pid_t pid = launcher_->launch(spec, &launch_error);
  ::close(req[0]);
  ::close(resp[1]);
  ::close(log_fd);
  if (pid < 0) {
    kill();
    return "spawn " + options_.python + ": " + launch_error;
  }
  pid_ = pid;
  ::fcntl(req_fd_, F_SETFL, ::fcntl(req_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(resp_fd_, F_SETFL, ::fcntl(resp_fd_, F_GETFL) | O_NONBLOCK);
  decoder_ = std::make_unique<JudgePipeDecoder>();
  return "";
}

std::vector<JudgeEvent> JudgeProcess::read_available() {
  std::vector<JudgeEvent> events;
  if (resp_fd_ < 0 || !decoder_) {
    events.emplace_back(JudgeEof{});
    return events;
  }
  bool eof = false;
  for (;;) {
    constexpr std::size_t kChunk = 64 * 1024;
    ssize_t n = ::read(resp_fd_, decoder_->buffer(kChunk), kChunk);
    if (n > 0) {
      decoder_->consumed(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) eof = true;  // else EAGAIN (or an error, treated as nothing to read)
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) eof = true;
    break;
  }
  events = decoder_->take_events();
  if (!events.empty() && std::holds_alternative<JudgeProtocolError>(events.back())) return events;
  if (eof) events.emplace_back(JudgeEof{});
  return events;
}

std::string JudgeProcess::send_eval(const wire::Job& job, std::chrono::milliseconds timeout) {
  if (req_fd_ < 0) return "judge not running";
  return write_all(req_fd_, pack_eval_request(job), Clock::now() + timeout);
}

std::string JudgeProcess::send_retime(const wire::Job& job, std::chrono::milliseconds timeout) {
  if (req_fd_ < 0) return "judge not running";
  return write_all(req_fd_, pack_retime_request(job), Clock::now() + timeout);
}

void JudgeProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) {
    kill();
    return;
  }
  if (req_fd_ >= 0) {
    write_all(req_fd_, pack_shutdown_request(), Clock::now() + grace);
    ::close(req_fd_);  // EOF on fd 3 also tells the judge to go
    req_fd_ = -1;
  }
  auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its process group id cannot be reused before
    // kill() signals the group.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      break;
    }
    ::usleep(10 * 1000);
  }
  kill();
}

void JudgeProcess::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    reap(/*blocking=*/true);
  }
  close_fds();
  decoder_.reset();
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
    temp_dir_.clear();
  }
}

void JudgeProcess::reap(bool blocking) {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, blocking ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_description_ = describe_status(status);
    pid_ = -1;
  } else if (r < 0) {
    exit_description_ = errno_text("waitpid", errno);
    pid_ = -1;
  }
}

void JudgeProcess::close_fds() {
  if (req_fd_ >= 0) ::close(req_fd_);
  if (resp_fd_ >= 0) ::close(resp_fd_);
  req_fd_ = resp_fd_ = -1;
}

std::string JudgeProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream in(options_.log_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  long size = static_cast<long>(in.tellg());
  long from = std::max(log_start_, size - static_cast<long>(max_bytes));
  if (from >= size) return "";
  in.seekg(from);
  std::string out(static_cast<std::size_t>(size - from), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

std::variant<JudgeReady, std::string> JudgeProcess::wait_ready(
    std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (running()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill();
      return "judge sent no ready within " + std::to_string(timeout.count()) +
             " ms (killed); log tail:\n" + log_tail();
    }
    pollfd p{resp_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    for (JudgeEvent& ev : read_available()) {
      if (auto* ready = std::get_if<JudgeReady>(&ev)) return std::move(*ready);
      std::string why;
      if (std::holds_alternative<JudgeEof>(ev)) {
        kill();
        why = "judge exited before ready (" + exit_description_ + ")";
      } else if (auto* pe = std::get_if<JudgeProtocolError>(&ev)) {
        why = pe->error;
        kill();
      } else {
        kill();
        why = "judge sent a result before ready";
      }
      return why + "; log tail:\n" + log_tail();
    }
  }
  return "judge not running";
}

JudgeResult JudgeProcess::evaluate(const wire::Job& job) {
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(job.timeout_s));
  std::string err = send_eval(job);
  if (!err.empty()) {
    std::string tail = log_tail();
    kill();
    return make_crash_result(job, err + " (" + exit_description_ + ")", tail);
  }
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill();
      return make_timeout_result(
          job, std::chrono::duration<double>(Clock::now() - start).count());
    }
    pollfd p{resp_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    for (JudgeEvent& ev : read_available()) {
      if (auto* r = std::get_if<JudgeResult>(&ev)) {
        if (r->job_id == job.job_id) return std::move(*r);
        continue;  // a stale result: not ours
      }
      if (std::holds_alternative<JudgeReady>(ev)) continue;
      std::string how = std::holds_alternative<JudgeEof>(ev)
                            ? std::string("judge exited")
                            : std::get<JudgeProtocolError>(ev).error;
      kill();
      std::string tail = log_tail();
      return make_crash_result(job, how + " (" + exit_description_ + ")", tail);
    }
  }
}

// -- synthesized results -----------------------------------------------------------------

JudgeResult make_timeout_result(const wire::Job& job, double elapsed_s) {
  JudgeResult r;
  r.job_id = job.job_id;
  Evaluation& e = r.evaluation;
  e.verdict = Verdict::timeout;
  std::ostringstream msg;
  msg << "no result within the job's timeout_s=" << job.timeout_s << " s (waited " << elapsed_s
      << " s); the judge's process group was killed and the judge restarted";
  e.error = msg.str();
  e.error_signature = "timeout";
  return r;  // no stage, untimed
}

JudgeResult make_crash_result(const wire::Job& job, const std::string& how,
                              const std::string& log_tail) {
  JudgeResult r;
  r.job_id = job.job_id;
  Evaluation& e = r.evaluation;
  e.verdict = Verdict::crash;
  e.error = "judge crashed mid-job: " + how;
  if (!log_tail.empty()) e.error += "\n--- judge log tail ---\n" + log_tail;
  e.error_signature = "crash: " + how;
  return r;  // no stage, untimed
}

EffectiveLimits effective_limits(const JudgeLimits& limits, const std::string& backend) {
  constexpr int64_t kMiB = 1024 * 1024;
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  int64_t as_default = backend == "tpu" ? -1 : std::max<int64_t>(8192, 2048 + 128 * cpus);
  EffectiveLimits e;
  e.address_space_bytes = resolve_limit(
      env_limit("PALLADIUM_JUDGE_AS_MB", limits.address_space_mb), as_default, kMiB);
  e.cpu_seconds = resolve_limit(env_limit("PALLADIUM_JUDGE_CPU_S", limits.cpu_seconds), 14400, 1);
  e.file_size_bytes =
      resolve_limit(env_limit("PALLADIUM_JUDGE_FSIZE_MB", limits.file_size_mb), 1024, kMiB);
  e.open_files = resolve_limit(env_limit("PALLADIUM_JUDGE_NOFILE", limits.open_files), 1024, 1);
  e.new_network_namespace = limits.new_network_namespace;
  return e;
}

std::string timing_kind_for(const std::string& backend) {
  return std::string(to_string(backend == "tpu" ? TimingKind::tpu_profiler : TimingKind::cpu_wall));
}

}  // namespace palladium::agent
