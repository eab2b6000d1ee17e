#include "bench/bench_swarm.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <queue>
#include <string>

#include <boost/program_options.hpp>
#include <zmq.hpp>

#include "agent/agent_log.hpp"
#include "agent/coordinator_link.hpp"
#include "protocol/curve_keys.hpp"
#include "protocol/wire_protocol.hpp"

namespace po = boost::program_options;

namespace palladium {

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_report = 0;
volatile sig_atomic_t g_stop = 0;
extern "C" void on_usr1(int) { g_report = 1; }
extern "C" void on_term(int) { g_stop = 1; }

// One simulated agent: the agent's own link (hello on every connect, heartbeats, liveness,
// reconnects with backoff after a bye or silence, results kept while disconnected) and, in
// place of judges, one slot that answers each job eval_ms after it started.
struct SimAgent {
  std::string name;
  std::unique_ptr<agent::CoordinatorLink> link;
  void* socket = nullptr;  // the link's socket whose ZMQ_FD epoll watches (it changes on reconnect)
  bool busy = false;
  wire::Job job;  // only job_id and lease are used
  std::deque<std::pair<int64_t, int64_t>> waiting;  // prefetched (job id, lease), in order
  Clock::time_point started;
};

struct Due {
  Clock::time_point at;
  size_t agent;
  bool operator>(const Due& o) const { return at > o.at; }
};

// Watches the link's current socket: a reconnect closed the old one (and with it its fd,
// which epoll forgets) and opened another.
bool watch(int ep, SimAgent& a, size_t index) {
  auto item = a.link->poll_item();
  void* socket = item ? item->socket : nullptr;
  if (socket == a.socket) return true;
  a.socket = socket;
  if (!socket) return true;
  int fd = -1;
  size_t len = sizeof fd;
  if (zmq_getsockopt(socket, ZMQ_FD, &fd, &len) != 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = index;
  return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
}

}  // namespace

int bench_swarm_command(const std::vector<std::string>& args) {
  std::string connect, server_key;
  int count = 1, eval_ms = 0, first = 0;
  po::options_description opts("palladium bench swarm");
  opts.add_options()("connect", po::value(&connect)->required(), "coordinator endpoint")(
      "server-key", po::value(&server_key)->required(), "coordinator public key (Z85)")(
      "count", po::value(&count), "agents in this process")(
      "eval-ms", po::value(&eval_ms), "simulated evaluation time")(
      "first", po::value(&first), "number of the first agent (for names)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);

  // Each socket needs a few fds; 2,500 agents need more than the default 1,024.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  signal(SIGUSR1, on_usr1);
  signal(SIGTERM, on_term);
  signal(SIGPIPE, SIG_IGN);

  // The links share one context: one I/O thread for the process, as before the links were the
  // agent's (a context per link would be two threads per agent).
  zmq::context_t ctx(1);
  ctx.set(zmq::ctxopt::max_sockets, count + 16);
  agent::agent_log()->set_level(spdlog::level::warn);  // not a "connecting" line per agent
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    std::perror("bench swarm: epoll_create1");
    return 2;
  }
  std::vector<SimAgent> agents(static_cast<size_t>(count));
  auto now = Clock::now();
  for (int i = 0; i < count; ++i) {
    std::string secret;
    if (!std::getline(std::cin, secret)) {
      std::cerr << "bench swarm: stdin ended after " << i << " of " << count << " keys\n";
      return 2;
    }
    SimAgent& a = agents[static_cast<size_t>(i)];
    agent::CoordinatorLink::Options o;
    o.endpoint = connect;
    o.agent_id = a.name = "sim" + std::to_string(first + i);
    o.server_key = server_key;
    o.public_key = keys::public_of(secret);
    o.secret_key = secret;
    a.link = std::make_unique<agent::CoordinatorLink>(o, ctx);
    wire::Hello h;
    h.agent_id = o.agent_id;
    h.backend = "interpret";
    h.device_kind = "cpu";
    h.jax_version = "0.10.2";
    h.slots = 1;
    h.stages = {"extract", "lint", "import", "trace", "lower", "structure", "numerics", "timing"};
    a.link->start(h, now);
    if (!watch(ep, a, static_cast<size_t>(i))) {
      std::perror("bench swarm: epoll_ctl");
      return 2;
    }
  }

  // epoll over the sockets' ZMQ_FDs, not zmq_poll over all of them: a turn costs what is
  // ready, not the process's 1,250 sockets, so the swarm measures the coordinator rather than
  // its own polling. ZMQ_FD only says "look again": a socket is drained after it fires and
  // after every send on it (a send may take the signal), and all of them once a second in case.
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due;
  int64_t busy_us = 0, jobs = 0, rehellos = 0;
  Clock::time_point next_beat_check = now;
  Clock::time_point next_sweep = now + std::chrono::seconds(1);
  wire::Result result;
  result.backend = "interpret";
  result.evaluation.verdict = Verdict::correct;
  result.evaluation.stage = Stage::done;
  result.evaluation.kernel_ms = 1.0;
  result.evaluation.baseline_ms = 1.0;
  result.evaluation.timing_kind = TimingKind::cpu_wall;
  auto drain = [&](size_t i) {
    SimAgent& a = agents[i];
    for (auto& message : a.link->receive(now)) {
      if (std::holds_alternative<wire::Bye>(message)) {
        ++rehellos;  // the link says hello again after its backoff
      } else if (auto* job = std::get_if<wire::Job>(&message)) {
        if (a.busy) {
          a.waiting.emplace_back(job->job_id, job->lease);  // like the real agent's queue
          continue;
        }
        a.busy = true;
        a.job.job_id = job->job_id;
        a.job.lease = job->lease;
        a.started = now;
        due.push(Due{now + std::chrono::milliseconds(eval_ms), i});
      }
    }
  };
  std::vector<epoll_event> ready(256);
  while (!g_stop) {
    now = Clock::now();
    long wait_ms = std::max<long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(next_beat_check - now).count());
    if (!due.empty())
      wait_ms = std::min<long>(
          wait_ms, std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                         due.top().at - now)
                                         .count()));
    int n = epoll_wait(ep, ready.data(), static_cast<int>(ready.size()), static_cast<int>(wait_ms));
    now = Clock::now();
    for (int k = 0; k < n; ++k) drain(static_cast<size_t>(ready[static_cast<size_t>(k)].data.u64));
    if (now >= next_sweep) {
      for (size_t i = 0; i < agents.size(); ++i) drain(i);
      next_sweep = now + std::chrono::seconds(1);
    }
    while (!due.empty() && due.top().at <= now) {
      size_t index = due.top().agent;
      SimAgent& a = agents[index];
      result.job_id = a.job.job_id;
      result.lease = a.job.lease;
      result.agent_id = a.name;
      due.pop();
      a.link->send(result);
      drain(index);
      a.busy = false;
      busy_us += std::chrono::duration_cast<std::chrono::microseconds>(now - a.started).count();
      ++jobs;
      if (!a.waiting.empty()) {
        // The next one starts at once, as a real agent's next judge job would.
        a.busy = true;
        a.job.job_id = a.waiting.front().first;
        a.job.lease = a.waiting.front().second;
        a.waiting.pop_front();
        a.started = now;
        due.push(Due{now + std::chrono::milliseconds(eval_ms), index});
      }
    }
    if (now >= next_beat_check) {
      // The links' timers: heartbeats after an idle interval, liveness, reconnects.
      for (size_t i = 0; i < agents.size(); ++i) {
        agents[i].link->on_timers(now);
        if (!watch(ep, agents[i], i)) {
          std::perror("bench swarm: epoll_ctl");
          return 2;
        }
        drain(i);
      }
      next_beat_check = now + std::chrono::milliseconds(50);
    }
    if (g_report) {
      g_report = 0;
      int64_t running = 0;
      for (auto& a : agents)
        if (a.busy)
          running += std::chrono::duration_cast<std::chrono::microseconds>(now - a.started).count();
      std::printf("%lld %lld %lld\n", static_cast<long long>(busy_us + running),
                  static_cast<long long>(jobs), static_cast<long long>(rehellos));
      std::fflush(stdout);
    }
  }
  close(ep);
  return 0;
}

}  // namespace palladium
