#include "bench/bench_llm.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "actors/errors.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/messages.hpp"
#include "llm/batch_runner.hpp"
#include "llm/call_runner.hpp"
#include "llm/curl_transport.hpp"
#include "llm/openai_provider.hpp"

namespace palladium {
namespace {

constexpr const char* kUsage =
    "usage: palladium bench llm --base-url http://127.0.0.1:PORT/v1 [--samples S] [--limited S]\n"
    "  --samples S   requests of each unlimited configuration (default 80)\n"
    "  --limited S   requests of each 60/min configuration (default 90: past a minute, so the\n"
    "                limit is measured over a whole 60 s window)\n"
    "Needs a server with the fake server's /_fake/ control endpoints "
    "(scripts/bench_llm.sh starts one).\n";

struct Scenario {
  const char* name;
  int max_concurrent;
  int samples_per_call;
  double requests_per_minute;  // 0 = none
  bool limited_size;           // uses --limited requests
  // The spend governor: the gateway's llm.max_usd_per_window over window_s, and the server
  // refusing (429 with RetryInfo) past the same limit; 0 = none.
  double usd_per_window = 0;
  double window_s = 0;
  bool batch = false;  // llm.mode: batch (the provider's batch API, half price)
};

// The fake server's default prices ($ per 1M tokens), for the gateway's own accounting.
double fake_price(const Usage& u) {
  return (static_cast<double>(u.prompt_tokens) * 0.5 + static_cast<double>(u.output_tokens()) * 3.0) /
         1e6;
}

struct Result {
  double wall_s = 0;
  double cpu_ms = 0;
  int64_t calls = 0;
  int failed = 0;
  int most_in_60s = 0;  // API requests the server saw in any 60 s window
  int refused = 0;      // answered 429 by the server
  int jobs = 0;         // batch jobs the server saw created
  double most_usd_in_window = 0;  // the server's answered cost in any spend window
};

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

// The fake server's control endpoints sit at the URL's root, beside /v1.
std::string root_of(const std::string& base_url) {
  const auto v1 = base_url.rfind("/v1");
  return v1 == std::string::npos ? base_url : base_url.substr(0, v1);
}

HttpResponse exchange(HttpTransport& transport, HttpRequest request) {
  auto done = std::make_shared<std::promise<HttpResponse>>();
  auto result = done->get_future();
  transport.send(std::move(request), [done](HttpResponse r) { done->set_value(std::move(r)); });
  return result.get();
}

nlohmann::json control(HttpTransport& transport, const std::string& root, const std::string& path,
                       bool post, const nlohmann::json& body = nlohmann::json::object()) {
  HttpRequest r;
  r.method = post ? "POST" : "GET";
  r.url = root + path;
  if (post) {
    r.body = body.dump();
    r.headers.push_back("Content-Type: application/json");
  }
  r.timeout = std::chrono::seconds(30);
  HttpResponse resp = exchange(transport, r);
  if (resp.status != 200)
    throw std::runtime_error(r.url + ": HTTP " + std::to_string(resp.status) +
                             " (not the fake LLM server?)");
  return resp.body.empty() ? nlohmann::json() : nlohmann::json::parse(resp.body);
}

// The most entries of `times` (seconds, ascending) inside any window of `window` seconds.
int most_in_window(const std::vector<double>& times, double window) {
  int best = 0;
  size_t first = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    while (times[i] - times[first] >= window) ++first;
    best = std::max(best, static_cast<int>(i - first + 1));
  }
  return best;
}

Result run(const Scenario& s, int requests, const std::string& base_url,
           std::shared_ptr<HttpTransport> transport) {
  caf::actor_system_config cfg;
  register_error_category(cfg);
  caf::actor_system sys{cfg};
  HttpProviderConfig pc;
  pc.model = "bench-model";
  pc.base_url = base_url;
  pc.sampling.max_output_tokens = 256;
  pc.max_samples_per_call = s.samples_per_call;
  pc.timeout = std::chrono::seconds(60);
  std::shared_ptr<HttpProvider> provider = make_openai_provider(pc);
  LlmGatewayOptions o;
  o.scheduler.max_concurrent = s.max_concurrent;
  o.scheduler.max_samples_per_call = s.samples_per_call;
  o.scheduler.requests_per_minute = s.requests_per_minute;
  o.scheduler.max_output_tokens = 256;
  if (s.usd_per_window > 0) {
    o.scheduler.cost = fake_price;
    o.scheduler.max_usd_per_window = s.usd_per_window;
    o.scheduler.spend_window = std::chrono::milliseconds(static_cast<int64_t>(s.window_s * 1000));
  }
  std::shared_ptr<CallRunner> runner;
  if (s.batch) {
    BatchOptions bo;
    bo.collect = std::chrono::milliseconds(200);
    bo.poll_interval = std::chrono::milliseconds(100);
    o.scheduler.max_concurrent = 1000000;  // a job holds its calls: no online cap applies
    runner = make_batch_runner(provider, transport, bo);
  } else {
    runner = make_http_runner(provider, transport);
  }
  auto gateway = spawn_llm_gateway(sys, runner, o);

  std::vector<std::future<bool>> answers;
  const double cpu0 = process_cpu_ms();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < requests; ++i) {
    auto ok = std::make_shared<std::promise<bool>>();
    answers.push_back(ok->get_future());
    ChatRequest r;
    r.workload_id = "8p";
    r.sample_index = i;
    r.seed = 1;
    r.system_prompt = "You write Pallas kernels for TPU v6e.";
    r.user_prompt = "## Workload 8p (GEMM)\nWrite a fast kernel.";
    sys.spawn([gateway, r, ok](caf::event_based_actor* self) {
      self->request(gateway, caf::infinite, generate_atom::value, r)
          .then([ok](const ChatResponse&) { ok->set_value(true); },
                [ok](const caf::error& e) {
                  std::fprintf(stderr, "request failed: %s\n", to_string(e).c_str());
                  ok->set_value(false);
                });
    });
  }
  Result res;
  for (auto& a : answers) res.failed += a.get() ? 0 : 1;
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.cpu_ms = process_cpu_ms() - cpu0;
  auto self = caf::scoped_actor{sys};
  self->request(gateway, caf::infinite, stats_atom::value)
      .receive([&](const LlmGatewayStats& st) { res.calls = st.calls.calls_started; },
               [&](const caf::error&) {});
  caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
  return res;
}

}  // namespace

int bench_llm_command(const std::vector<std::string>& args) {
  std::string base_url;
  int samples = 80, limited = 90;
  for (size_t i = 0; i < args.size(); ++i) {
    auto number = [&](int* out) {
      if (i + 1 >= args.size()) return false;
      char* end = nullptr;
      const long n = std::strtol(args[++i].c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 100000) return false;
      *out = static_cast<int>(n);
      return true;
    };
    if (args[i] == "--base-url" && i + 1 < args.size()) {
      base_url = args[++i];
    } else if (args[i] == "--samples") {
      if (!number(&samples)) return std::cerr << kUsage, 2;
    } else if (args[i] == "--limited") {
      if (!number(&limited)) return std::cerr << kUsage, 2;
    } else if (args[i] == "--help" || args[i] == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "palladium bench llm: unexpected argument '" << args[i] << "'\n" << kUsage;
      return 2;
    }
  }
  if (base_url.empty()) {
    std::cerr << "palladium bench llm: --base-url is required\n" << kUsage;
    return 2;
  }
  const std::vector<Scenario> scenarios = {
      {"one call at a time", 1, 1, 0, false},
      {"8 in flight", 8, 1, 0, false},
      {"8 in flight, coalesced n=4", 8, 4, 0, false},
      {"60/min, 8 in flight", 8, 1, 60, true},
      {"60/min, coalesced n=4", 8, 4, 60, true},
      // About 2.5 worst cases ($0.00078 each) per 5 s: the governor, not the latency, paces.
      {"$0.002/5s spend, 8 in flight", 8, 1, 0, false, 0.002, 5},
      {"batch mode, n=4", 8, 4, 0, false, 0, 0, true},
  };
  std::shared_ptr<HttpTransport> transport = make_curl_transport();
  const std::string root = root_of(base_url);
  std::printf("%-28s %8s %9s %7s %8s %11s %9s %8s\n", "configuration", "samples", "samples/s",
              "calls", "wall_s", "cpu_ms/call", "max/60s", "x first");
  double first_rate = 0;
  bool ok = true;
  for (const auto& s : scenarios) {
    const int n = s.limited_size ? limited : samples;
    Result r;
    try {
      control(*transport, root, "/_fake/reset", true);
      control(*transport, root, "/_fake/config", true,
              {{"usd_per_window", s.usd_per_window}, {"window_s", s.window_s > 0 ? s.window_s : 600}});
      const int n_here = s.usd_per_window > 0 ? std::min(n, 12) : n;
      r = run(s, n_here, base_url, transport);
      std::vector<double> times;
      std::vector<std::pair<double, double>> costs;
      for (const auto& e : control(*transport, root, "/_fake/log", false)) {
        if (e.value("api", "") == "") continue;
        times.push_back(e.at("t").get<double>());
        if (e.value("status", 0) == 429) r.refused++;
        if (e.contains("batch_job")) r.jobs++;
        if (e.value("status", 0) == 200) costs.push_back({e.at("t").get<double>(), e.value("cost_usd", 0.0)});
      }
      std::sort(times.begin(), times.end());
      r.most_in_60s = most_in_window(times, 60.0);
      for (const auto& [a, _] : costs) {
        double sum = 0;
        for (const auto& [t, c] : costs)
          if (t >= a && t < a + s.window_s) sum += c;
        r.most_usd_in_window = std::max(r.most_usd_in_window, sum);
      }
    } catch (const std::exception& e) {
      std::cerr << "palladium bench llm: " << e.what() << "\n";
      return 1;
    }
    const int done = s.usd_per_window > 0 ? std::min(n, 12) : n;
    const double rate = (done - r.failed) / r.wall_s;
    if (first_rate == 0) first_rate = rate;
    std::string window = "-";
    if (s.requests_per_minute > 0) {
      window = std::to_string(r.most_in_60s);
      if (r.most_in_60s > s.requests_per_minute) ok = false;
    }
    if (s.usd_per_window > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "$%.5f", r.most_usd_in_window);
      window = buf;  // the most answered $ in any spend window, not requests
      if (r.most_usd_in_window > s.usd_per_window * (1 + 1e-9)) ok = false;
    }
    if (s.batch) {
      window = std::to_string(r.jobs) + " job" + (r.jobs == 1 ? "" : "s");
      if (r.jobs < 1) ok = false;
    }
    std::printf("%-28s %8d %9.2f %7lld %8.2f %11.3f %9s %7.2fx\n", s.name, done, rate,
                static_cast<long long>(r.calls), r.wall_s,
                r.calls > 0 ? r.cpu_ms / static_cast<double>(r.calls) : 0.0, window.c_str(),
                rate / first_rate);
    if (r.failed > 0 || r.refused > 0) ok = false;
  }
  std::printf("%s\n", ok ? "every request answered; no limit exceeded (max/60s <= 60, the "
                          "spend row's most $ in a 5 s window <= $0.002, no 429)"
                         : "FAILED: a request failed or a limit was exceeded (see above)");
  return ok ? 0 : 1;
}

}  // namespace palladium
