#include "agent/agent.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "protocol/curve_keys.hpp"
#include "protocol/endpoint.hpp"
#include "protocol/wire_protocol.hpp"
#include "agent/agent_log.hpp"
#include "agent/error_headline.hpp"
#include "agent/coordinator_link.hpp"
#include "agent/secret_scrubber.hpp"
#include "agent/judge_process.hpp"
#include "agent/slot_pool.hpp"

namespace palladium::agent {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::shared_ptr<spdlog::logger> log() { return agent_log(); }

long ms_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(b - a).count());
}

// The signal that made run_agent() stop, for the bye reason (0: none).
volatile sig_atomic_t g_signal = 0;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

// What a judge of `backend` runs when its ready frame does not say: the interpret backend
// checks everything but the libtpu compile; a TPU host has libtpu and compiles too.
std::vector<std::string> default_stages(const std::string& backend) {
  std::vector<std::string> stages{"extract", "lint", "import", "trace", "lower"};
  if (backend == "tpu") stages.push_back("compile");
  for (const char* s : {"structure", "numerics", "timing"}) stages.push_back(s);
  return stages;
}

}  // namespace

AgentOptions with_defaults(AgentOptions o) {
  if (o.agent_id.empty()) {
    char host[256] = {0};
    if (::gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "host");
    o.agent_id = std::string(host) + "-" + std::to_string(::getpid());
  }
  if (o.home.empty()) o.home = env_or("PALLADIUM_HOME", PALLADIUM_SOURCE_DIR);
  if (o.python.empty()) o.python = env_or("PALLADIUM_PYTHON", o.home + "/.venv/bin/python");
  if (o.log_dir.empty()) {
    std::error_code ec;
    auto tmp = std::filesystem::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    o.log_dir = (tmp / ("palladium-agent-" + o.agent_id)).string();
  }
  if (o.judge_module.empty()) o.judge_module = "judge";
  return o;
}

// -- Agent::Impl ---------------------------------------------------------------------------

class Agent::Impl {
 public:
  explicit Impl(AgentOptions options)
      : opt_(with_defaults(std::move(options))),
        pool_(opt_.slots, milliseconds(opt_.judge_start_timeout_ms)) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      stop_read_ = fds[0];
      stop_write_ = fds[1];
    }
  }

  ~Impl() {
    for (auto& judge : judges_) judge->kill();
    if (stop_read_ >= 0) ::close(stop_read_);
    if (stop_write_ >= 0) ::close(stop_write_);
  }

  void request_stop() {
    stop_requested_.store(true);
    if (stop_write_ >= 0) {
      char c = 1;
      [[maybe_unused]] ssize_t n = ::write(stop_write_, &c, 1);
    }
  }

  void set_stop_reason(std::string reason) { stop_reason_ = std::move(reason); }

  int run();

  const AgentOptions& options() const { return opt_; }

 private:
  using State = SlotPool::State;

  std::string validate() const;
  std::string make_link();
  bool start_judge(int slot, Clock::time_point now);
  void restart_judge(int slot, Clock::time_point now);
  int wait_all_ready();
  void on_message(wire::Message message);
  void dispatch(wire::Job job);
  // Sends each job the pool assigns to an idle slot to that slot's judge.
  void send_assigned(Clock::time_point now);
  void send_result(const SlotPool::Finished& done, JudgeResult judged);
  // A re-timing job's answer (a RETIMED frame); a failure of its judge is one with `error` set.
  void send_retimed(const SlotPool::Finished& done, JudgeRetimed sitting);
  // The judge of busy `slot` died or broke the protocol under its job: the pool retries the job
  // on a fresh judge or charges it a crash.
  void judge_lost(int slot, const std::string& how, const std::string& log_tail);
  void on_judge_events(int slot);
  void on_timers(Clock::time_point now);
  bool drain_stop_pipe();

  AgentOptions opt_;
  std::atomic<bool> stop_requested_{false};
  std::string stop_reason_ = "stop requested";
  int stop_read_ = -1;
  int stop_write_ = -1;

  SlotPool pool_;                                     // what each slot does (no I/O)
  std::vector<std::unique_ptr<JudgeProcess>> judges_;  // slot i's judge
  SecretScrubber scrubber_ = SecretScrubber::from_environment();
  std::string jax_version_;
  std::string device_kind_;
  std::string libtpu_version_;
  std::vector<std::string> stages_;

  std::unique_ptr<CoordinatorLink> link_;  // made by run() once the keys are read
};

std::string Agent::Impl::make_link() {
  CoordinatorLink::Options lo;
  lo.endpoint = opt_.connect_endpoint;
  lo.agent_id = opt_.agent_id;
  lo.heartbeat_ms = opt_.heartbeat_ms;
  lo.liveness = opt_.liveness;
  lo.reconnect_max_ms = opt_.reconnect_max_ms;
  try {
    if (!opt_.server_key.empty()) {
      lo.server_key = keys::public_key_from(opt_.server_key);
      std::string secret;
      if (opt_.key_fd >= 0) {
        // One line from the coordinator that started us; the pipe is closed at once so no
        // judge inherits it.
        char buf[128] = {0};
        ssize_t n = ::read(opt_.key_fd, buf, sizeof buf - 1);
        ::close(opt_.key_fd);
        secret.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
        while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
          secret.pop_back();
        lo.secret_key = secret;
        lo.public_key = keys::public_of(secret);
      } else if (!opt_.key_file.empty()) {
        keys::KeyPair pair = keys::read_certificate(opt_.key_file, /*need_secret=*/true);
        lo.public_key = pair.public_key;
        lo.secret_key = pair.secret_key;
      } else {
        return "--server-key needs the agent's own key (--key FILE)";
      }
    } else if (!opt_.insecure_plaintext && !is_loopback_endpoint(opt_.connect_endpoint)) {
      return "refusing an unauthenticated link to " + opt_.connect_endpoint +
             ": pass --server-key and --key (palladium keys), or --insecure-plaintext on a "
             "network you trust completely";
    }
  } catch (const keys::KeyError& e) {
    return e.what();
  }
  link_ = std::make_unique<CoordinatorLink>(std::move(lo));
  return "";
}

std::string Agent::Impl::validate() const {
  if (opt_.connect_endpoint.empty()) return "no coordinator endpoint (--connect)";
  if (opt_.backend != "interpret" && opt_.backend != "tpu") {
    return "unknown backend \"" + opt_.backend + "\" (want interpret or tpu)";
  }
  if (opt_.slots < 1) return "slots must be >= 1";
  if (opt_.heartbeat_ms < 1 || opt_.liveness < 1) return "heartbeat_ms and liveness must be >= 1";
  if (stop_read_ < 0) return "could not create the stop pipe";
  return "";
}

bool Agent::Impl::start_judge(int slot, Clock::time_point now) {
  std::string err = judges_[slot]->start();
  if (!err.empty()) {
    log()->error("slot {}: cannot start judge: {}", slot, err);
    return false;
  }
  pool_.started(slot, now);
  return true;
}

void Agent::Impl::restart_judge(int slot, Clock::time_point now) {
  judges_[slot]->kill();
  if (pool_.restart_now(slot) && start_judge(slot, now)) return;
  milliseconds delay = pool_.back_off(slot, now);
  log()->warn("slot {}: judge restart in {} ms", slot, delay.count());
}

int Agent::Impl::wait_all_ready() {
  for (int i = 0; i < pool_.size(); ++i) {
    if (!start_judge(i, Clock::now())) return kExitJudgeFailed;
  }
  while (!pool_.all_idle()) {
    if (stop_requested_.load()) return kExitOk;
    std::vector<zmq::pollitem_t> items{{nullptr, stop_read_, ZMQ_POLLIN, 0}};
    for (int i = 0; i < pool_.size(); ++i) {
      if (pool_.state(i) == State::kStarting) {
        items.push_back({nullptr, judges_[i]->response_fd(), ZMQ_POLLIN, 0});
      }
    }
    try {
      zmq::poll(items.data(), items.size(), milliseconds(200));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
    auto now = Clock::now();
    for (int i = 0; i < pool_.size(); ++i) {
      if (pool_.state(i) != State::kStarting) continue;
      JudgeProcess& judge = *judges_[i];
      std::string failure;
      if (now > pool_.deadline(i)) {
        failure = "no ready within " + std::to_string(opt_.judge_start_timeout_ms) + " ms";
      } else {
        for (JudgeEvent& ev : judge.read_available()) {
          if (auto* ready = std::get_if<JudgeReady>(&ev)) {
            if (opt_.backend == "tpu" &&
                (ready->backend != "tpu" || ready->device_kind.empty() ||
                 ready->device_kind == "cpu")) {
              failure = "judge reports backend \"" + ready->backend + "\" device \"" +
                        ready->device_kind + "\", not a TPU";
              break;
            }
            pool_.ready(i);
            jax_version_ = ready->jax_version;
            device_kind_ = opt_.backend == "interpret" ? "cpu" : ready->device_kind;
            libtpu_version_ = ready->libtpu_version;
            stages_ = ready->stages.empty() ? default_stages(opt_.backend) : ready->stages;
            log()->info("slot {}: judge pid {} ready in {} ms (jax {}, {})", i, judge.pid(),
                        ms_between(pool_.started_at(i), now), ready->jax_version,
                        ready->device_kind);
          } else if (std::holds_alternative<JudgeEof>(ev)) {
            judge.kill();
            failure = "judge exited before ready (" + judge.exit_description() + ")";
          } else if (auto* pe = std::get_if<JudgeProtocolError>(&ev)) {
            failure = pe->error;
          } else {
            failure = "judge sent a result before ready";
          }
        }
      }
      if (!failure.empty()) {
        judge.kill();
        std::string tail = judge.log_tail();
        if (opt_.backend == "tpu") {
          log()->critical(
              "--backend tpu: the judge found no usable TPU device; refusing to start. "
              "slot {}: {}\n{}",
              i, failure, tail);
        } else {
          log()->critical("slot {}: judge failed to start: {}\n{}", i, failure, tail);
        }
        return kExitJudgeFailed;
      }
    }
  }
  return kExitOk;
}

void Agent::Impl::on_message(wire::Message message) {
  if (auto* job = std::get_if<wire::Job>(&message)) {
    dispatch(std::move(*job));
  } else if (std::holds_alternative<wire::Heartbeat>(message)) {
    // nop: the link already counted it as proof of life
  } else if (std::holds_alternative<wire::Bye>(message)) {
    // nop: the link logged it and says hello again after its backoff
  } else {
    log()->warn("dropping unexpected {} frame from the coordinator", wire::type_name(message));
  }
}

void Agent::Impl::dispatch(wire::Job job) {
  const int64_t id = job.job_id;
  switch (pool_.submit(std::move(job))) {
    case SlotPool::Admission::kDuplicateRunning:
      log()->warn("job {} is already running; duplicate dropped", id);
      return;
    case SlotPool::Admission::kDuplicateQueued:
      log()->warn("job {} is already queued; duplicate dropped", id);
      return;
    case SlotPool::Admission::kOverAssigned:
      log()->warn("job {} arrived with all {} slots busy (coordinator over-assigned); queued "
                  "locally ({} waiting)",
                  id, pool_.size(), pool_.queued());
      break;
    case SlotPool::Admission::kQueued:
      log()->debug("job {} queued until a judge is ready", id);
      break;
    case SlotPool::Admission::kAccepted:
      break;
  }
  send_assigned(Clock::now());
}

void Agent::Impl::send_assigned(Clock::time_point now) {
  // A judge that cannot take its job is restarted and the job requeued at the front, where the
  // next idle slot takes it in the next round.
  for (std::vector<int> taken = pool_.assign(now); !taken.empty(); taken = pool_.assign(now)) {
    for (int i : taken) {
      JudgeProcess& judge = *judges_[i];
      const wire::Job& job = *pool_.job(i);
      std::string err = job.codes.empty() ? judge.send_eval(job) : judge.send_retime(job);
      if (!err.empty()) {
        judge.kill();
        judge_lost(i, err + " (" + judge.exit_description() + ")", judge.log_tail());
        restart_judge(i, now);
      }
    }
  }
}

void Agent::Impl::judge_lost(int slot, const std::string& how, const std::string& log_tail) {
  const int64_t id = pool_.job(slot)->job_id;
  SlotPool::Lost lost = pool_.judge_lost(slot);
  if (!lost.charged) {
    log()->warn("slot {}: the judge was lost running job {} ({}); retrying it on a fresh judge "
                "({} of {})", slot, id, how, lost.deaths, SlotPool::kJudgeRetries);
    return;
  }
  send_result(*lost.charged,
              make_crash_result(lost.charged->job,
                                "the judge died " + std::to_string(lost.deaths) +
                                    " times while evaluating this candidate; last: " + how,
                                log_tail));
}

void Agent::Impl::send_retimed(const SlotPool::Finished& done, JudgeRetimed sitting) {
  wire::Retimed out;
  out.job_id = sitting.job_id;
  out.lease = done.job.lease;
  out.agent_id = opt_.agent_id;
  out.backend = opt_.backend;
  sitting.error = scrubber_.scrub(sitting.error);
  long ms = ms_between(done.started, Clock::now());
  if (sitting.error.empty())
    log()->info("re-timing {} {}: {} candidates in {} ms", out.job_id, done.job.workload_id,
                sitting.kernel_ms.size(), ms);
  else
    log()->info("re-timing {} {} failed in {} ms: {}", out.job_id, done.job.workload_id, ms,
                error_headline(sitting.error).substr(0, 160));
  out.sitting = std::move(sitting);
  link_->send(out);
}

void Agent::Impl::send_result(const SlotPool::Finished& done, JudgeResult judged) {
  if (!done.job.codes.empty()) {
    // A re-timing whose judge timed out or kept dying: a sitting that was not held, saying why.
    JudgeRetimed failed;
    failed.job_id = done.job.job_id;
    failed.error = judged.evaluation.error.empty()
                       ? std::string(to_string(judged.evaluation.verdict))
                       : judged.evaluation.error;
    send_retimed(done, std::move(failed));
    return;
  }
  const wire::Job& job = done.job;
  wire::Result result;
  result.job_id = judged.job_id;
  result.agent_id = opt_.agent_id;
  result.backend = opt_.backend;
  result.lease = job.lease;  // the coordinator hears a result only for the lease it gave
  result.evaluation = std::move(judged.evaluation);
  Evaluation& e = result.evaluation;
  // Nothing the agent knows as a secret leaves it, whatever text the candidate produced.
  e.error = scrubber_.scrub(e.error);
  e.error_signature = scrubber_.scrub(e.error_signature);
  e.stdout_text = scrubber_.scrub(e.stdout_text);
  e.stderr_text = scrubber_.scrub(e.stderr_text);
  if (e.compile_finding) e.compile_finding = scrubber_.scrub(*e.compile_finding);
  long ms = ms_between(done.started, Clock::now());
  const std::string_view verdict = to_string(e.verdict);
  if (e.verdict == Verdict::correct || e.error.empty()) {
    log()->info("job {} {} -> {} in {} ms", job.job_id, job.workload_id, verdict, ms);
  } else {
    log()->info("job {} {} -> {} in {} ms: {}", job.job_id, job.workload_id, verdict, ms,
                error_headline(e.error).substr(0, 160));
  }
  link_->send(result);
}

void Agent::Impl::on_judge_events(int slot) {
  auto now = Clock::now();
  JudgeProcess& judge = *judges_[slot];
  for (JudgeEvent& ev : judge.read_available()) {
    if (auto* ready = std::get_if<JudgeReady>(&ev)) {
      if (pool_.ready(slot)) {
        log()->info("slot {}: judge pid {} ready in {} ms", slot, ready->pid,
                    ms_between(pool_.started_at(slot), now));
      }
      continue;
    }
    if (auto* retimed = std::get_if<JudgeRetimed>(&ev)) {
      std::optional<SlotPool::Finished> done;
      const wire::Job* running = pool_.job(slot);
      if (running != nullptr && !running->codes.empty())
        done = pool_.complete(slot, retimed->job_id);
      if (done) {
        send_retimed(*done, std::move(*retimed));
      } else {
        log()->warn("slot {}: dropping a re-timing for job {} it was not running", slot,
                    retimed->job_id);
      }
      continue;
    }
    if (auto* result = std::get_if<JudgeResult>(&ev)) {
      if (auto done = pool_.complete(slot, result->job_id)) {
        send_result(*done, std::move(*result));
      } else {
        log()->warn("slot {}: dropping a result for job {} it was not running", slot,
                    result->job_id);
      }
      continue;
    }
    // EOF or a protocol error: the judge is done for.
    std::string how = std::holds_alternative<JudgeEof>(ev)
                          ? std::string("judge exited")
                          : std::get<JudgeProtocolError>(ev).error;
    judge.kill();
    how += " (" + judge.exit_description() + ")";
    std::string tail = judge.log_tail();
    if (pool_.state(slot) == State::kBusy && pool_.job(slot) != nullptr) {
      judge_lost(slot, how, tail);
    } else {
      log()->error("slot {}: {}; log tail:\n{}", slot, how, tail);
      if (pool_.state(slot) == State::kStarting) pool_.start_failed(slot);
    }
    restart_judge(slot, now);
    return;
  }
}

void Agent::Impl::on_timers(Clock::time_point now) {
  for (auto [slot, timer] : pool_.due(now)) {
    switch (timer) {
      case SlotPool::Timer::kJobTimeout: {
        judges_[slot]->kill();
        std::optional<SlotPool::Finished> done = pool_.complete(slot, pool_.job(slot)->job_id);
        double elapsed_s = std::chrono::duration<double>(now - done->started).count();
        send_result(*done, make_timeout_result(done->job, elapsed_s));
        restart_judge(slot, now);
        break;
      }
      case SlotPool::Timer::kReadyTimeout:
        log()->error("slot {}: judge sent no ready within {} ms; killed", slot,
                     opt_.judge_start_timeout_ms);
        pool_.start_failed(slot);
        restart_judge(slot, now);
        break;
      case SlotPool::Timer::kRestart:
        if (!start_judge(slot, now)) restart_judge(slot, now);
        break;
    }
  }
  link_->on_timers(now);
}

bool Agent::Impl::drain_stop_pipe() {
  char buf[64];
  while (::read(stop_read_, buf, sizeof(buf)) > 0) {
  }
  return stop_requested_.load();
}

int Agent::Impl::run() {
  std::string err = validate();
  if (err.empty()) err = make_link();
  if (!err.empty()) {
    log()->critical("agent: {}", err);
    return kExitBadOptions;
  }
  std::error_code ec;
  std::filesystem::create_directories(opt_.log_dir, ec);
  if (ec) {
    log()->critical("agent: cannot create log dir {}: {}", opt_.log_dir, ec.message());
    return kExitBadOptions;
  }
  for (int i = 0; i < opt_.slots; ++i) {
    JudgeOptions so;
    so.python = opt_.python;
    so.home = opt_.home;
    so.module = opt_.judge_module;
    so.backend = opt_.backend;
    so.log_path = opt_.log_dir + "/judge-" + std::to_string(i) + ".log";
    // One judge per chip: slot i owns chip i, so candidates never share a chip's timing.
    if (opt_.backend == "tpu" && opt_.slots > 1) so.extra_env = one_chip_environment(i);
    judges_.push_back(std::make_unique<JudgeProcess>(std::move(so)));
  }
  log()->info("agent {}: starting {} judge(s): {} -m {} --backend {} (logs in {})",
              opt_.agent_id, opt_.slots, opt_.python, opt_.judge_module, opt_.backend,
              opt_.log_dir);
  int rc = wait_all_ready();
  if (rc != kExitOk) {
    for (auto& judge : judges_) judge->kill();
    return rc;
  }

  if (!stop_requested_.load()) {
    wire::Hello hello;
    hello.agent_id = opt_.agent_id;
    hello.backend = opt_.backend;
    hello.device_kind = device_kind_;
    hello.jax_version = jax_version_;
    hello.libtpu_version = libtpu_version_;
    hello.slots = pool_.size();
    hello.stages = stages_;
    link_->start(std::move(hello), Clock::now());
  }
  while (!stop_requested_.load()) {
    std::vector<zmq::pollitem_t> items;
    items.push_back({nullptr, stop_read_, ZMQ_POLLIN, 0});
    std::optional<zmq::pollitem_t> link_item = link_->poll_item();
    if (link_item) items.push_back(*link_item);
    std::vector<int> polled;
    for (int i = 0; i < pool_.size(); ++i) {
      if (judges_[i]->response_fd() >= 0 && pool_.state(i) != State::kDown) {
        items.push_back({nullptr, judges_[i]->response_fd(), ZMQ_POLLIN, 0});
        polled.push_back(i);
      }
    }
    auto now = Clock::now();
    auto wait = std::max<long>(0, ms_between(now, pool_.next_wakeup(link_->next_wakeup(now))));
    try {
      zmq::poll(items.data(), items.size(), milliseconds(wait));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      continue;
    }
    if ((items[0].revents & ZMQ_POLLIN) && drain_stop_pipe()) break;
    std::size_t next = 1;
    if (link_item) {
      if (items[next].revents & ZMQ_POLLIN) {
        for (wire::Message& m : link_->receive(Clock::now())) on_message(std::move(m));
      }
      ++next;
    }
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (items[next + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) on_judge_events(polled[i]);
    }
    send_assigned(Clock::now());
    on_timers(Clock::now());
    send_assigned(Clock::now());
  }

  if (g_signal != 0) {
    const char* name = ::strsignal(g_signal);
    stop_reason_ = "signal " + std::to_string(g_signal) + " (" + (name ? name : "?") + ")";
  }
  log()->info("agent {}: stopping ({})", opt_.agent_id, stop_reason_);
  link_->close(stop_reason_);
  for (int i = 0; i < pool_.size(); ++i) {
    // A busy judge would not read `shutdown` until its job ends; its job is abandoned
    // (the coordinator requeues it on bye), so kill it outright.
    if (pool_.state(i) == State::kBusy) {
      judges_[i]->kill();
    } else {
      judges_[i]->stop(milliseconds(2000));
    }
  }
  return kExitOk;
}

// -- Agent ---------------------------------------------------------------------------------

Agent::Agent(AgentOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Agent::~Agent() = default;
int Agent::run() { return impl_->run(); }
void Agent::request_stop() { impl_->request_stop(); }
const AgentOptions& Agent::options() const { return impl_->options(); }

// -- run_agent -----------------------------------------------------------------------------

namespace {

std::atomic<Agent*> g_agent{nullptr};

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  if (Agent* a = g_agent.load()) a->request_stop();
}

}  // namespace

int run_agent(const AgentOptions& options) {
  g_signal = 0;
  Agent agent(options);
  g_agent.store(&agent);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_term {}, old_int {};
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGINT, &sa, &old_int);
  int rc = agent.run();
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  g_agent.store(nullptr);
  g_signal = 0;
  return rc;
}

}  // namespace palladium::agent
