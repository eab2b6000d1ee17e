#include "coordinator/live_status.hpp"

#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "actors/eval_dispatcher.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/messages.hpp"

namespace palladium {

LiveStatusWriter::LiveStatusWriter(caf::actor_system& sys, EvalDispatcherActor dispatcher,
                                   std::vector<LlmGatewayActor> llm_gateways,
                                   std::filesystem::path path, std::string command,
                                   int64_t sample_cap)
    : asker_(sys),
      dispatcher_(std::move(dispatcher)),
      llm_gateways_(std::move(llm_gateways)),
      path_(std::move(path)),
      command_(std::move(command)),
      sample_cap_(sample_cap) {}

LiveStatusWriter::~LiveStatusWriter() { remove_file(); }

void LiveStatusWriter::remove_file() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

void LiveStatusWriter::maybe_write(const std::function<std::vector<int64_t>()>& running_runs,
                                   std::chrono::milliseconds every) {
  int64_t now = unix_ms_now();
  if (now - last_ms_ < every.count()) return;
  last_ms_ = now;
  CoordinatorStatus s;
  s.pid = getpid();
  s.updated_unix_ms = now;
  s.command = command_;
  asker_->request(dispatcher_, std::chrono::seconds(1), stats_atom::value)
      .receive(
          [&](const DispatcherStats& d) {
            s.agents = d.agents;
            s.slots = d.slots;
            s.queued = d.queued;
            s.in_flight = d.in_flight;
          },
          [](caf::error&) {});
  for (const auto& gateway : llm_gateways_) {
    asker_->request(gateway, std::chrono::seconds(1), stats_atom::value)
        .receive(
            [&](const LlmGatewayStats& g) {
              s.llm_in_flight = std::max<int64_t>(s.llm_in_flight, 0) + g.calls.in_flight;
              s.llm_queued = std::max<int64_t>(s.llm_queued, 0) + g.calls.queued;
              s.llm_committed_usd += g.committed_usd;
              if (!g.calls.holding.empty())
                s.llm_holding += (s.llm_holding.empty() ? "" : "; ") + g.calls.holding;
              if (!g.stopped.empty())
                s.llm_stopped += (s.llm_stopped.empty() ? "" : "; ") + g.stopped;
            },
            [](caf::error&) {});
  }
  s.running_runs = running_runs();
  s.sample_cap = sample_cap_;
  try {
    write_status_file(path_, s);
  } catch (const std::exception& e) {
    spdlog::warn("{}", e.what());
  }
}

}  // namespace palladium
