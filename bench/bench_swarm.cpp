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
#include <zmq_addon.hpp>

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

struct SimAgent {
  std::unique_ptr<zmq::socket_t> sock;
  std::string name;
  bool busy = false;
  wire::Job job;  // only job_id and lease are used
  std::deque<std::pair<int64_t, int64_t>> waiting;  // prefetched (job id, lease), in order
  Clock::time_point started;
  Clock::time_point last_sent;
  long interval_ms = 500;
  std::string hello;  // its encoded HELLO
  // After a bye (refused, or dropped as silent by a coordinator that fell behind) it says hello
  // again after a backoff, as palladium agent does (agent/coordinator_link.cpp); without
  // that, an agent dropped during a 10,000-agent join never came back.
  bool rehello_pending = false;
  Clock::time_point rehello_at;
  long backoff_ms = 500;
};

struct Due {
  Clock::time_point at;
  size_t agent;
  bool operator>(const Due& o) const { return at > o.at; }
};

void send(SimAgent& a, const std::string& bytes, Clock::time_point now) {
  (void)a.sock->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  a.last_sent = now;
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

  zmq::context_t ctx(1);
  ctx.set(zmq::ctxopt::max_sockets, count + 16);
  std::vector<SimAgent> agents(static_cast<size_t>(count));
  auto now = Clock::now();
  for (int i = 0; i < count; ++i) {
    std::string secret;
    if (!std::getline(std::cin, secret)) {
      std::cerr << "bench swarm: stdin ended after " << i << " of " << count << " keys\n";
      return 2;
    }
    SimAgent& a = agents[static_cast<size_t>(i)];
    a.name = "sim" + std::to_string(first + i);
    a.sock = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
    a.sock->set(zmq::sockopt::linger, 0);
    a.sock->set(zmq::sockopt::curve_serverkey, server_key);
    a.sock->set(zmq::sockopt::curve_publickey, keys::public_of(secret));
    a.sock->set(zmq::sockopt::curve_secretkey, secret);
    a.sock->connect(connect);
    wire::Hello h;
    h.agent_id = a.name;
    h.backend = "interpret";
    h.device_kind = "cpu";
    h.jax_version = "0.10.2";
    h.slots = 1;
    h.stages = {"extract", "lint", "import", "trace", "lower", "structure", "numerics", "timing"};
    a.hello = wire::encode(h);
    send(a, a.hello, now);
  }

  // epoll over the sockets' ZMQ_FDs, not zmq_poll over all of them: a turn costs what is
  // ready, not the process's 1,250 sockets, so the swarm measures the coordinator rather than
  // its own polling. ZMQ_FD only says "look again": a socket is drained after it fires and
  // after every send on it (a send may take the signal), and all of them once a second in case.
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    std::perror("bench swarm: epoll_create1");
    return 2;
  }
  for (size_t i = 0; i < agents.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    int fd = agents[i].sock->get(zmq::sockopt::fd);
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
      std::perror("bench swarm: epoll_ctl");
      return 2;
    }
  }
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
    zmq::message_t msg;
    while (a.sock->recv(msg, zmq::recv_flags::dontwait)) {
      auto d = wire::decode(msg.to_string_view());
      if (!d.ok()) continue;
      if (std::holds_alternative<wire::Bye>(*d.message)) {
        if (!a.rehello_pending) {
          a.rehello_pending = true;
          a.rehello_at = now + std::chrono::milliseconds(a.backoff_ms);
          a.backoff_ms = std::min<long>(a.backoff_ms * 2, 8000);
        }
        continue;
      }
      a.backoff_ms = 500;
      if (auto* job = std::get_if<wire::Job>(&*d.message)) {
        if (a.busy) {
          a.waiting.emplace_back(job->job_id, job->lease);  // like the real agent's queue
          continue;
        }
        a.busy = true;
        a.job.job_id = job->job_id;
        a.job.lease = job->lease;
        a.started = now;
        due.push(Due{now + std::chrono::milliseconds(eval_ms), i});
      } else if (auto* beat = std::get_if<wire::Heartbeat>(&*d.message)) {
        if (beat->interval_ms > 0) a.interval_ms = beat->interval_ms;
      }
    }
  };
  auto send_and_drain = [&](size_t i, const std::string& bytes) {
    send(agents[i], bytes, now);
    drain(i);
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
      send_and_drain(index, wire::encode(result));
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
      std::string beat;
      for (size_t i = 0; i < agents.size(); ++i) {
        SimAgent& a = agents[i];
        if (a.rehello_pending && now >= a.rehello_at) {
          a.rehello_pending = false;
          ++rehellos;
          send_and_drain(i, a.hello);
          continue;
        }
        if (now - a.last_sent >= std::chrono::milliseconds(a.interval_ms)) {
          if (beat.empty()) beat = wire::encode(wire::Heartbeat{"sim"});
          send_and_drain(i, beat);
        }
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
