// One Python judge child process, seen from the agent: it moves the judge pipe's bytes
// (protocol/judge_pipe.json; packed and decoded by agent/judge_pipe_codec.hpp).
//
// The child is the judge, `<python> -m <module> --backend <backend>`, started through a
// sandbox::ProcessLauncher (sandbox/process_launcher.hpp; by default the SandboxedLauncher:
// fork+execve, no shell, its own process group) with PYTHONPATH=<home>, an allowlisted
// environment (judge_environment_variable(); PALLADIUM_SANDBOX names the candidate sandbox
// launcher), cwd = TMPDIR = a private temp dir, fd 3 = requests, fd 4 = responses, fds 1/2
// appended to a log file, every other fd closed on exec, and the sandbox of
// docs/verification.md ("Sandbox"): rlimits on address space, CPU seconds, file size and open
// files, no core dumps, and a fresh network namespace (no interfaces but a down loopback) when
// the agent runs as root.
//
// The class is non-blocking by design: the agent polls response_fd() together with its
// other fds and calls read_available() when it is readable. wait_ready() and evaluate() are
// blocking conveniences built on the same primitives (for startup and tests).
//
// Thread safety: none; one thread owns a JudgeProcess. Constructing one ignores SIGPIPE
// process-wide (a dead child must surface as EPIPE, not kill the agent).

#ifndef PALLADIUM_AGENT_JUDGE_PROCESS_HPP_
#define PALLADIUM_AGENT_JUDGE_PROCESS_HPP_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agent/judge_pipe_codec.hpp"
#include "protocol/judge_pipe.hpp"
#include "protocol/wire_protocol.hpp"
#include "sandbox/process_launcher.hpp"

namespace palladium::agent {

// The judge pipe's version is protocol/judge_pipe.json's (kJudgePipeVersion); it changes
// independently of the wire protocol's wire::kVersion.

// True when the agent's variable `name` may reach the judge: locale, PATH, HOME, the JAX, XLA
// and TPU runtime settings and the judge cache; never a name that looks like a credential.
bool judge_environment_variable(const std::string& name);

// Resource limits of a judge (setrlimit in the child before exec). 0 means "the default
// below", -1 means "leave the inherited limit". Each can also be overridden at run time by an
// environment variable of the agent, read by start(): PALLADIUM_JUDGE_AS_MB,
// PALLADIUM_JUDGE_CPU_S, PALLADIUM_JUDGE_FSIZE_MB, PALLADIUM_JUDGE_NOFILE (same
// meaning of 0 and -1). The measurements behind the defaults: docs/verification.md.
struct JudgeLimits {
  // RLIMIT_AS. Default for backend "interpret": max(8192, 2048 + 128 * online CPUs) MiB
  // (measured peak 1.6 GiB virtual on 2 CPUs, 0.4 GiB resident; XLA adds a thread, stack and
  // malloc arena per CPU). Backend "tpu": unlimited (libtpu reserves large virtual ranges).
  int64_t address_space_mb = 0;
  // RLIMIT_CPU soft limit over the whole life of the persistent process (hard = soft + 30).
  // Default 14400 s. The judge restarts itself between jobs at half of it, so a job always
  // has >= 7200 CPU s; per-job bounds come from the agent's wall-clock timeout_s.
  int64_t cpu_seconds = 0;
  int64_t file_size_mb = 0;   // RLIMIT_FSIZE, default 1024 (also bounds the judge log)
  int64_t open_files = 0;     // RLIMIT_NOFILE, default 1024 (measured: 6 in use)
  bool new_network_namespace = true;  // unshare(CLONE_NEWNET), only when euid == 0
};

// The limits start() applies for `backend` after defaults and environment overrides (-1:
// unchanged).
using EffectiveLimits = sandbox::ChildLimits;
EffectiveLimits effective_limits(const JudgeLimits& limits, const std::string& backend);

struct JudgeOptions {
  std::string python;                    // interpreter path, required
  std::string home;                      // PYTHONPATH (the repo root), required
  std::string module = "judge";
  std::string backend = "interpret";
  std::string log_path;                  // stdout/stderr of the child; appended, required
  JudgeLimits limits;
  std::vector<std::string> extra_env;    // "NAME=value" added last (e.g. the chip to use)
};

// libtpu's settings that give a process exactly one chip of the host, so that
// several judges (one per slot) can share a TPU VM: "NAME=value" entries for
// chip `chip`. Only one process may open a given chip.
std::vector<std::string> one_chip_environment(int chip);

class JudgeProcess {
 public:
  // `launcher` starts the child; null means a sandbox::SandboxedLauncher.
  explicit JudgeProcess(JudgeOptions options,
                        std::shared_ptr<sandbox::ProcessLauncher> launcher = nullptr);
  ~JudgeProcess();  // kill()s a running child

  JudgeProcess(const JudgeProcess&) = delete;
  JudgeProcess& operator=(const JudgeProcess&) = delete;

  // Spawns the child. Returns "" on success, else why it failed (nothing is left running).
  // Any previous child must have been stopped. Does not wait for `ready`.
  std::string start();

  // The read end of the response pipe (non-blocking), or -1 when not running.
  int response_fd() const { return resp_fd_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Reads everything available on the response pipe without blocking and returns the
  // events parsed from it, in order. A JudgeEof or JudgeProtocolError is the last event;
  // after one of those the caller should kill() the child.
  std::vector<JudgeEvent> read_available();

  // Writes an `eval` request for `job` (job_id, workload_id, code, check_level, seeds (their
  // number; the judge draws fresh ones), require_pallas, timeout_s).
  // Waits at most `timeout` for pipe space. Returns "" on success, else the error (the child
  // is gone or not reading).
  std::string send_eval(const wire::Job& job,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Writes a `retime` request for a re-timing job (job.codes not empty): job_id, workload_id,
  // codes, require_pallas, timeout_s. Same waiting and errors as send_eval().
  std::string send_retime(const wire::Job& job,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Sends `shutdown`, waits up to `grace` for the child to exit, then kill()s it.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // SIGKILL to the child's process group, then a blocking waitpid: no zombie is left.
  // Closes the pipes and removes the private temp dir. Idempotent.
  void kill();

  // After the child was reaped: how it ended, e.g. "exit status 3" or "killed by signal 9
  // (Killed)". Empty while running or never started.
  const std::string& exit_description() const { return exit_description_; }

  // The last `max_bytes` of what the current (or last) child wrote to its log.
  std::string log_tail(std::size_t max_bytes = 2048) const;

  // Blocking: polls until a `ready` frame arrives (returned) or `timeout` passes, the child
  // exits or breaks the protocol (error returned; the child is killed).
  std::variant<JudgeReady, std::string> wait_ready(std::chrono::milliseconds timeout);

  // Blocking: sends `job`, waits up to job.timeout_s for its result. On timeout or a crash
  // the child is killed and a synthesized result is returned (see make_timeout_result and
  // make_crash_result); the caller restarts the judge.
  JudgeResult evaluate(const wire::Job& job);

  const JudgeOptions& options() const { return options_; }

 private:
  void reap(bool blocking);
  void close_fds();

  JudgeOptions options_;
  std::shared_ptr<sandbox::ProcessLauncher> launcher_;
  pid_t pid_ = -1;
  int req_fd_ = -1;
  int resp_fd_ = -1;
  std::string temp_dir_;
  long log_start_ = 0;  // log file size when the current child started
  std::string exit_description_;
  std::unique_ptr<JudgePipeDecoder> decoder_;
};

// The result the agent reports when a job's judge exceeded the job's timeout_s. Untimed: it
// has no timing_kind (a failure must not make a TPU run's report look like CPU timings).
JudgeResult make_timeout_result(const wire::Job& job, double elapsed_s);

// The result the agent reports when a job's judge died, closed its pipe or broke the
// protocol mid-job. `how` is exit_description() or the protocol error; `log_tail` is the end
// of the judge log.
JudgeResult make_crash_result(const wire::Job& job, const std::string& how,
                               const std::string& log_tail);

// "cpu-wall" for interpret, "tpu-profiler" for tpu.
std::string timing_kind_for(const std::string& backend);

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_JUDGE_PROCESS_HPP_
