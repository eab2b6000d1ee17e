// What `palladium run` and `palladium sweep` both derive from a RunConfig
// before any actor starts: the searches, the LLM provider, the coordinator's
// options and the default database path.
//
// All of it fails before anything is stored, with a ConfigError naming the
// config file and key, so a bad config never leaves a run row behind.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "actors/run_actor.hpp"
#include "actors/workload_search_actor.hpp"
#include "coordinator/coordinator.hpp"
#include "config/run_config.hpp"
#include "actors/llm_gateway.hpp"
#include "llm/call_runner.hpp"
#include "llm/provider.hpp"

namespace palladium {

// One WorkloadSearchSpec per workload x seed of `config` (run_id left 0),
// each with the baseline module read from `home`/workloads, the context
// blocks from `home`/workloads/context when the method uses them, and the
// strategy menus when it plans from them. Throws ConfigError naming `origin`
// if a module, the context or a menu is missing or bad.
std::vector<WorkloadSearchSpec> search_specs(const RunConfig& config, const std::string& origin,
                                             const std::filesystem::path& home);

// The actors' request timeouts from the coordinator section.
RequestTimeouts request_timeouts(const CoordinatorConfig& coordinator);

// The run actor's plan for `searches` (run_id set on each): budgets, global
// reallocation and pipelining from the search and agents sections, timeouts from the
// coordinator section.
RunPlan run_plan(const RunConfig& config, int64_t run_id, std::vector<WorkloadSearchSpec> searches,
                 bool live_progress);

// The provider the llm section names. Throws ConfigError naming `origin`.
std::shared_ptr<Provider> make_provider(const LlmConfig& llm, const std::string& origin,
                                        const std::filesystem::path& home);

// What the llm section asks the gateway to drive: the runner (offline provider, or an HTTP
// provider over the libcurl transport) and the gateway's limits, retries, prices and dollar
// cap. The API key is read here from the environment variable llm.api_key_env and goes only
// into the provider's request headers. Throws ConfigError naming `origin` and the key (an
// unset key variable, a missing price when llm.max_usd is set, an unreadable price table).
struct LlmBackend {
  std::shared_ptr<CallRunner> runner;
  LlmGatewayOptions options;
};
LlmBackend make_llm_backend(const LlmConfig& llm, const std::string& origin,
                            const std::filesystem::path& home);

// A run config read from `path` with the command line's overrides, and what is derived from
// it checked: its searches and, unless `offline` (a dry run calls no provider, so needs no API
// key or corpus), its LLM backend, which reuses stored answers when `use_cache`. Throws
// ConfigError.
struct PreparedRun {
  RunConfig config;
  std::vector<WorkloadSearchSpec> searches;
  LlmBackend llm;
};
PreparedRun prepare_run(const std::string& path, const AgentsOverrides& overrides, bool offline,
                        bool use_cache, const std::filesystem::path& home);

// Coordinator options from the agents, evaluation and coordinator sections;
// local agents log under `log_dir`.
CoordinatorOptions coordinator_options(const RunConfig& config, const std::string& log_dir);

// A fresh database path under `home`/runs named after `name`, the time and the pid.
std::string default_db_path(const std::filesystem::path& home, const std::string& name);

}  // namespace palladium
