// Coordinator: the coordinator process's machinery, set up once and shared by
// `palladium run`, `palladium sweep` and `palladium eval`.
//
// It owns, in this order of construction:
//   - the CAF actor system, sized from the machine (scheduler threads: the
//     configured count, else one per core);
//   - the ZeroMQ bridge (the ROUTER agents connect to: a CURVE server with an
//     allowlist, unless plaintext was asked for) and the eval dispatcher
//     behind it;
//   - optionally the run services: the store actor (the one writer of the run
//     database) and the LLM gateway;
//   - the local agent processes it starts on this machine (each with a fresh
//     key pair the bridge allows).
// The commands then spawn their run or sweep actors on system() and wait().
//
// Failure: the constructor throws CoordinatorError naming the config key that
// caused it (e.g. agents.listen for a bind failure). wait() never throws.
//
// Interrupts: SIGINT/SIGTERM/SIGHUP end wait() with `interrupted`; the
// command then marks its runs `interrupted` (resumable) and abandons.
//
// Shutdown: shutdown() stops the local agents, the services and the dispatcher
// and joins the bridge thread. When actors are blocked on work that can no
// longer come (every agent gone, an interrupt), abandon() ends the process
// without waiting for them, after the caller has stored what it must.
//
// Threading: one owner thread (the command's main thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/eval_dispatcher.hpp"
#include "actors/llm_gateway.hpp"
#include "actors/store_actor.hpp"
#include "actors/zmq_bridge.hpp"
#include "coordinator/agent_link.hpp"
#include "coordinator/local_agents.hpp"

namespace palladium {

class Provider;
class RunStore;

struct CoordinatorOptions {
  int scheduler_threads = 0;  // 0: one per core
  RequestTimeouts timeouts;   // the LLM gateways' waits on the store
  // The agent link: where, and with which keys (coordinator/agent_link.hpp); `listen` is
  // link.listen.
  AgentLinkOptions link{"tcp://127.0.0.1:0", "", ""};
  // Ledger, admission and capability matching; target.backend follows agent.backend.
  DispatcherOptions dispatch;
  int local_agents = 0;
  // How local agents run; `connect` is filled in from the bound endpoint.
  LocalAgentSpec agent;
  bool quiet_endpoint = false;  // no "agents connect to" line (palladium eval)
};

// A set-up failure; key() is the config key or flag to blame.
class CoordinatorError : public std::runtime_error {
 public:
  CoordinatorError(std::string key, const std::string& what)
      : std::runtime_error(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// The number of scheduler threads `requested` resolves to on this machine.
int scheduler_threads_for(int requested);

// Sizes the CAF scheduler of a coordinator process: scheduler_threads_for(requested_threads)
// worker threads, and how long an idle worker spins before it sleeps.
void configure_scheduler(caf::actor_system_config& cfg, int requested_threads);

// The endpoint local agents dial: `bound` with a wildcard host made 127.0.0.1.
std::string local_connect_endpoint(std::string bound);

class Coordinator {
 public:
  // How wait() ended.
  enum class WaitEnd {
    ready,        // the awaited work is done
    agents_lost,  // local agents exited as the policy below says
    interrupted,  // SIGINT, SIGTERM or SIGHUP (coordinator/interrupt.hpp)
  };
  // When losing local agents ends a wait.
  enum class AgentLoss {
    all,    // a run: remote agents may still come, but not with none configured
    first,  // palladium eval: its one agent is the only evaluator
  };

  // Builds the actor system, binds the bridge, spawns the dispatcher and
  // installs the interrupt handlers. Throws CoordinatorError.
  explicit Coordinator(CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  caf::actor_system& system() { return *system_; }
  EvalDispatcherActor dispatcher() const { return dispatcher_; }
  const std::string& endpoint() const;  // as bound, port resolved

  // Spawns the store actor over `store` and the LLM gateway over `provider`.
  void start_services(std::shared_ptr<RunStore> store, std::shared_ptr<Provider> provider);
  // ... and over `runner`, with the gateway's limits, retries and dollar cap.
  void start_services(std::shared_ptr<RunStore> store, std::shared_ptr<CallRunner> runner,
                      LlmGatewayOptions gateway);
  StoreActor store() const { return store_; }
  LlmGatewayActor llm_gateway() const { return llm_gateway_; }
  // One more LLM gateway, over `runner` and the store of start_services()
  // (call that first): a sweep whose cells use several llm sections has one
  // per section, all over one response cache; stopped by shutdown() like the first.
  LlmGatewayActor add_llm_gateway(std::shared_ptr<CallRunner> runner, LlmGatewayOptions gateway);

  // Starts options.local_agents agent processes. Throws std::runtime_error if
  // one cannot be started.
  void start_local_agents();

  // Polls `ready` (every 250 ms) until it returns true, until a signal asks
  // the process to stop, or until local agents have exited as `loss` says;
  // logs each exit with how many are left. `lost` receives the last exit's
  // description.
  WaitEnd wait(const std::function<bool()>& ready, AgentLoss loss, std::string* lost = nullptr);

  // Asks the store actor to mark run `run_id` with `status`, waiting at most
  // `timeout`. Returns false (and logs why) if there is no store actor or it
  // did not confirm in time.
  bool mark_run(int64_t run_id, const std::string& status, const std::string& reason = "",
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // An orderly stop of everything; idempotent.
  void shutdown();

  // Stops the local agents, flushes stdout/stderr and ends the process with
  // `exit_code` without waiting for blocked actors.
  [[noreturn]] void abandon(int exit_code);

 private:
  CoordinatorOptions options_;
  std::unique_ptr<caf::actor_system_config> config_;  // outlives system_
  std::unique_ptr<caf::actor_system> system_;
  std::shared_ptr<ZmqBridge> bridge_;
  EvalDispatcherActor dispatcher_;
  LlmGatewayActor llm_gateway_;
  std::vector<LlmGatewayActor> extra_gateways_;
  StoreActor store_;
  LocalAgents local_;
  int local_alive_ = 0;
  bool shut_down_ = false;
};

}  // namespace palladium
