#include "coordinator/coordinator.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/eval_dispatcher.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/messages.hpp"
#include "actors/store_actor.hpp"
#include "coordinator/interrupt.hpp"
#include "protocol/endpoint.hpp"

namespace palladium {

int scheduler_threads_for(int requested) {
  if (requested > 0) return requested;
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 2 : static_cast<int>(cores);
}

void configure_scheduler(caf::actor_system_config& cfg, int requested_threads) {
  cfg.set("scheduler.max-threads", scheduler_threads_for(requested_threads));
  // CAF's work-stealing workers poll an empty queue 100 times, then 500 more with 50 us naps,
  // before they wait on their condition variable. A coordinator's actors get a message every
  // few hundred microseconds, so its workers lived in that loop: each nap a context switch,
  // ~10 us of CPU per candidate at 1,000 agents (palladium bench dispatch). A few polls, then
  // the condition variable (an enqueue wakes it), cost one wake-up per burst instead.
  cfg.set("work-stealing.aggressive-poll-attempts", 10);
  cfg.set("work-stealing.moderate-poll-attempts", 0);
}

std::string local_connect_endpoint(std::string bound) {
  for (const char* any : {"0.0.0.0", "*"}) {
    auto pos = bound.find(any);
    if (pos != std::string::npos) bound.replace(pos, std::string(any).size(), "127.0.0.1");
  }
  return bound;
}

Coordinator::Coordinator(CoordinatorOptions options) : options_(std::move(options)) {
  install_interrupt_handlers();
  config_ = std::make_unique<caf::actor_system_config>();
  register_error_category(*config_);
  configure_scheduler(*config_, options_.scheduler_threads);
  config_->set("logger.console-verbosity", caf::atom("quiet"));
  system_ = std::make_unique<caf::actor_system>(*config_);
  try {
    bridge_ = open_agent_link(options_.link);
  } catch (const AgentLinkError& e) {
    throw CoordinatorError(e.key(), e.what());
  }
  if (!options_.quiet_endpoint) {
    std::cerr << "[palladium] agents connect to " << bridge_->endpoint();
    if (bridge_->authenticated())
      std::cerr << " with --server-key " << bridge_->public_key() << " (CURVE)";
    std::cerr << "\n";
  }
  if (!bridge_->authenticated() && !is_loopback_endpoint(bridge_->endpoint()))
    std::cerr << "[palladium] WARNING: " << bridge_->endpoint()
              << " is reachable beyond this machine over an unauthenticated, unencrypted link "
                 "(insecure plaintext): use it only on a network you trust completely.\n";
  DispatcherOptions dispatch = options_.dispatch;
  dispatch.target.backend = options_.agent.backend.empty() ? "interpret" : options_.agent.backend;
  // Without keys an identity is only a routing id: bound how many one address may register.
  if (!bridge_->authenticated()) dispatch.admission.max_agents_per_address = 64;
  dispatcher_ = spawn_eval_dispatcher(*system_, bridge_, dispatch);
}

Coordinator::~Coordinator() { shutdown(); }

const std::string& Coordinator::endpoint() const { return bridge_->endpoint(); }

void Coordinator::start_services(std::shared_ptr<RunStore> store,
                                 std::shared_ptr<Provider> provider) {
  store_ = spawn_store(*system_, std::move(store));
  llm_gateway_ = spawn_llm_gateway(*system_, std::move(provider));
}

void Coordinator::start_services(std::shared_ptr<RunStore> store,
                                 std::shared_ptr<CallRunner> runner, LlmGatewayOptions gateway) {
  store_ = spawn_store(*system_, std::move(store));
  // The gateway looks answers up in, and records every call and answer to, the same store.
  gateway.timeouts = options_.timeouts;
  llm_gateway_ = spawn_llm_gateway(*system_, std::move(runner), std::move(gateway), store_);
}

LlmGatewayActor Coordinator::add_llm_gateway(std::shared_ptr<CallRunner> runner,
                                             LlmGatewayOptions gateway) {
  // Over the same store as the first: every gateway reads and fills the one response cache.
  gateway.timeouts = options_.timeouts;
  extra_gateways_.push_back(
      spawn_llm_gateway(*system_, std::move(runner), std::move(gateway), store_));
  return extra_gateways_.back();
}

void Coordinator::start_local_agents() {
  LocalAgentSpec spec = options_.agent;
  spec.connect = local_connect_endpoint(bridge_->endpoint());
  spec.server_key = bridge_->public_key();
  if (!spec.log_dir.empty()) std::filesystem::create_directories(spec.log_dir);
  for (const auto& key : local_.start(options_.local_agents, spec))
    if (!key.empty()) bridge_->allow(key);
  local_alive_ = options_.local_agents;
  if (options_.local_agents == 0)
    std::cerr << "[palladium] no local agents; waiting for agents to connect\n";
}

Coordinator::WaitEnd Coordinator::wait(const std::function<bool()>& ready, AgentLoss loss,
                                       std::string* lost) {
  while (!ready()) {
    if (interrupt_signal() != 0) return WaitEnd::interrupted;
    if (auto how = local_.exited_status()) {
      --local_alive_;
      if (lost) *lost = *how;
      if (loss == AgentLoss::first) return WaitEnd::agents_lost;
      std::cerr << "\n[palladium] a local agent exited (" << *how << "); " << local_alive_
                << " left\n";
      if (local_alive_ == 0 && options_.local_agents > 0) return WaitEnd::agents_lost;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return WaitEnd::ready;
}

bool Coordinator::mark_run(int64_t run_id, const std::string& status, const std::string& reason,
                           std::chrono::milliseconds timeout) {
  if (!store_) return false;
  bool ok = false;
  caf::scoped_actor self{*system_};
  self->request(store_, timeout, finish_atom::value, run_id, status, reason)
      .receive([&](bool) { ok = true; },
               [&](caf::error& e) {
                 spdlog::error("could not mark run {} {}: {}", run_id, status, to_string(e));
               });
  return ok;
}

void Coordinator::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  local_.stop();
  if (dispatcher_) caf::anon_send_exit(dispatcher_, caf::exit_reason::user_shutdown);
  if (llm_gateway_) caf::anon_send_exit(llm_gateway_, caf::exit_reason::user_shutdown);
  for (auto& g : extra_gateways_) caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
  if (store_) caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
  system_->await_all_actors_done();
  bridge_->stop();
}

void Coordinator::abandon(int exit_code) {
  local_.stop();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(exit_code);
}

}  // namespace palladium
