#include "coordinator/run_setup.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "llm/batch_runner.hpp"
#include "llm/context_blocks.hpp"
#include "llm/curl_transport.hpp"
#include "llm/gemini_provider.hpp"
#include "llm/hand_tuned_provider.hpp"
#include "llm/openai_provider.hpp"
#include "llm/price_table.hpp"
#include "llm/replay_provider.hpp"
#include "llm/split_runner.hpp"
#include "llm/synthetic_provider.hpp"
#include "workloads/workload_catalog.hpp"

namespace fs = std::filesystem;

namespace palladium {
namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<WorkloadSearchSpec> search_specs(const RunConfig& config, const std::string& origin,
                                             const fs::path& home) {
  check_run_config_files(config, origin, home);
  const fs::path context_dir = home / "workloads" / "context";
  const MethodConfig& method = config.search.method_config;
  StrategyMenus menus;
  std::unique_ptr<ContextLibrary> library;
  if (method_uses_menus(method)) {
    for (auto [key, name, out] : {std::make_tuple("autocomp.translate_menu",
                                                  &config.search.translate_menu, &menus.translate),
                                  std::make_tuple("autocomp.optimise_menu",
                                                  &config.search.optimise_menu, &menus.optimise)}) {
      try {
        *out = load_menu(context_dir, *name);
      } catch (const ContextError& e) {
        throw ConfigError(origin + ": " + key + ": " + e.what());
      }
    }
  }
  // Every brief carries the blocks; the strategy decides whether its prompts use them.
  library = std::make_unique<ContextLibrary>(
      load_context_library(ConfigReader(origin), home, config.workloads));
  std::vector<WorkloadSearchSpec> searches;
  for (const auto& id : config.workloads) {
    WorkloadBrief brief;
    brief.id = id;
    // check_run_config_files found every id in the catalog.
    const WorkloadEntry& entry = *workload_catalog().find(id);
    brief.baseline_source = read_file(home / entry.module);
    brief.name = entry.name;
    if (library) {
      try {
        brief.context = library->assemble(id, config.context.blocks).text;
      } catch (const ContextError& e) {
        throw ConfigError(origin + ": workloads: '" + id + "': " + e.what());
      }
    }
    for (auto seed : config.seeds) {
      WorkloadSearchSpec spec;
      spec.brief = brief;
      spec.method = method;
      spec.menus = menus;
      spec.llm_provider = config.llm.provider;
      spec.seed = seed;
      spec.budget = config.search.budget_per_workload;
      spec.eval.workload_id = id;
      spec.eval.timeout_s = config.evaluation.timeout_s;
      spec.eval.input_seeds = config.evaluation.input_seeds;
      spec.eval.require_pallas = config.evaluation.require_pallas;
      spec.eval.judge = config.evaluation.judge;
      searches.push_back(std::move(spec));
    }
  }
  return searches;
}

RequestTimeouts request_timeouts(const CoordinatorConfig& coordinator) {
  RequestTimeouts t;
  t.store = std::chrono::seconds(coordinator.store_timeout_s);
  t.llm = std::chrono::seconds(coordinator.llm_timeout_s);
  t.run = std::chrono::seconds(coordinator.run_timeout_s);
  t.status = std::chrono::seconds(coordinator.status_timeout_s);
  return t;
}

RunPlan run_plan(const RunConfig& config, int64_t run_id, std::vector<WorkloadSearchSpec> searches,
                 bool live_progress) {
  RunPlan plan;
  plan.run_id = run_id;
  for (auto& s : searches) s.run_id = run_id;
  plan.searches = std::move(searches);
  plan.live_progress = live_progress;
  plan.budget_per_search = config.search.budget_per_workload;
  plan.global = config.search.global_enabled;
  plan.global_config = config.search.global;
  plan.in_flight_per_slot = config.search.in_flight_per_slot;
  plan.slots_per_agent = config.agents.slots_per_agent;
  plan.timeouts = request_timeouts(config.coordinator);
  return plan;
}

std::shared_ptr<Provider> make_provider(const LlmConfig& llm, const std::string& origin,
                                        const fs::path& home) {
  if (llm.provider == "replay") return make_replay_provider(home / llm.corpus);
  if (llm.provider == "hand_tuned") return make_hand_tuned_provider(home);
  if (llm.provider == "synthetic") return make_synthetic_provider(home / "llm" / "synthetic");
  throw ConfigError(origin + ": llm.provider: '" + llm.provider + "' is not implemented");
}

LlmBackend make_llm_backend(const LlmConfig& llm, const std::string& origin,
                            const fs::path& home) {
  LlmBackend b;
  SchedulerOptions& so = b.options.scheduler;
  so.provider = llm.provider;
  so.max_concurrent = llm.max_concurrent;
  so.requests_per_minute = llm.requests_per_minute;
  so.tokens_per_minute = llm.tokens_per_minute;
  so.max_output_tokens = llm.sampling.max_output_tokens;
  so.retry.max_attempts = llm.max_attempts;
  so.max_usd = llm.max_usd;
  so.max_usd_per_window = llm.max_usd_per_window;
  so.spend_window = std::chrono::milliseconds(static_cast<int64_t>(llm.spend_window_s * 1000));
  if (llm.call_deadline_s)
    so.call_deadline = std::chrono::milliseconds(static_cast<int64_t>(*llm.call_deadline_s * 1000));
  so.adaptive_concurrency = llm.adaptive_concurrency;
  if (!llm.remote()) {
    b.runner = make_local_runner(make_provider(llm, origin, home));
    so.max_samples_per_call = 1;  // offline answers cost nothing to ask for one by one
    return b;
  }
  HttpProviderConfig pc;
  pc.model = llm.model;
  pc.base_url = llm.base_url;
  pc.sampling = llm.sampling;
  pc.max_samples_per_call = llm.samples_per_call;
  pc.max_tokens_field = llm.max_tokens_field;
  pc.fold_system_prompt = llm.fold_system_prompt;
  pc.send_seed = llm.send_seed;
  pc.timeout = std::chrono::milliseconds(static_cast<int64_t>(llm.timeout_s * 1000));
  if (!llm.api_key_env.empty()) {
    const char* key = std::getenv(llm.api_key_env.c_str());
    if (key == nullptr || *key == '\0')
      throw ConfigError(origin + ": llm.api_key_env: the environment variable " + llm.api_key_env +
                        " is not set (it must hold the " + llm.provider +
                        " API key; api_key_env: \"\" sends none, for a local server)");
    pc.api_key = key;
  }
  const fs::path prices = home / llm.prices;
  std::optional<Price> price;
  if (fs::is_regular_file(prices)) {
    try {
      price = PriceTable::load(prices.string()).find(llm.provider, llm.model);
    } catch (const PriceTableError& e) {
      throw ConfigError(origin + ": llm.prices: " + e.what());
    }
  }
  if (llm.max_usd && !price)
    throw ConfigError(origin + ": llm.max_usd: no price for " + llm.provider + " model '" +
                      llm.model + "' in " + prices.string() + ", so the cap cannot be enforced");
  if (llm.max_usd_per_window && !price)
    throw ConfigError(origin + ": llm.max_usd_per_window: no price for " + llm.provider +
                      " model '" + llm.model + "' in " + prices.string() +
                      ", so the spend-rate limit cannot be enforced");
  const bool batch = llm.mode == "batch";
  // Some roles or methods online, the rest in jobs: each call is priced as it went (its usage
  // says so); a worst case before the call is then the online one.
  const bool split = batch && (!llm.batch_roles.empty() || !llm.online_methods.empty());
  const bool all_batch = batch && !split;
  if (price) {
    so.cost = [p = *price, all_batch](const Usage& u) {
      return cost_usd(p, u, all_batch || u.batch);
    };
    b.options.cache_saved = [p = *price, all_batch](const Usage& u) {
      return cache_savings_usd(p, u, all_batch || u.batch);
    };
  }
  std::shared_ptr<HttpProvider> provider = llm.provider == "openai"
                                               ? make_openai_provider(std::move(pc))
                                               : make_gemini_provider(std::move(pc));
  so.max_samples_per_call = provider->max_samples_per_call();
  if (batch) {
    // A job holds its calls for minutes to hours: no call is in flight in the online sense,
    // so neither the concurrency cap nor a per-call deadline applies.
    BatchOptions bo;
    bo.collect = std::chrono::milliseconds(static_cast<int64_t>(llm.batch_collect_s * 1000));
    bo.poll_interval = std::chrono::milliseconds(static_cast<int64_t>(llm.batch_poll_s * 1000));
    const fs::path journal = home / llm.batch_journal;
    fs::create_directories(journal.parent_path());
    bo.journal = open_batch_journal(journal.string());
    PromptCheck check;
    check.fail = llm.prompt_shortfall == "error";
    if (!split) {
      so.max_concurrent = 1000000;
      so.adaptive_concurrency = false;
      so.call_deadline.reset();
      b.runner = make_batch_runner(std::move(provider), make_curl_transport(), std::move(bo));
      return b;
    }
    // The online calls keep the concurrency cap and the call deadline; the scheduler exempts
    // the job calls (so.in_job) from both, so a job's hours-long calls neither hold the
    // online slots nor fail at the online deadline. The per-minute and spend limits bound both.
    std::shared_ptr<HttpTransport> transport = make_curl_transport();
    auto online = make_http_runner(provider, transport, check);
    auto jobs = make_batch_runner(provider, transport, std::move(bo));
    std::set<SampleRole> roles;
    for (const auto& r : llm.batch_roles) roles.insert(*sample_role_from_string(r));
    const std::set<std::string> online_methods(llm.online_methods.begin(),
                                               llm.online_methods.end());
    auto goes_batch = [roles, online_methods](const ChatRequest& r) {
      return (roles.empty() || roles.count(r.role)) && !online_methods.count(r.method);
    };
    so.in_job = goes_batch;
    b.runner = make_split_runner(std::move(online), std::move(jobs), goes_batch);
    return b;
  }
  PromptCheck check;
  check.fail = llm.prompt_shortfall == "error";
  b.runner = make_http_runner(std::move(provider), make_curl_transport(), check);
  return b;
}

PreparedRun prepare_run(const std::string& path, const AgentsOverrides& overrides, bool offline,
                        bool use_cache, const fs::path& home) {
  PreparedRun run;
  run.config = load_run_config(path);
  apply_overrides(overrides, run.config.agents);
  run.searches = search_specs(run.config, path, home);
  if (!offline) {
    run.llm = make_llm_backend(run.config.llm, path, home);
    run.llm.options.use_cache = use_cache;
  }
  return run;
}

CoordinatorOptions coordinator_options(const RunConfig& config, const std::string& log_dir) {
  CoordinatorOptions o;
  o.scheduler_threads = config.coordinator.scheduler_threads;
  o.timeouts = request_timeouts(config.coordinator);
  o.link.listen = config.agents.listen;
  o.link.server_key_file = config.agents.server_key;
  o.link.allow = config.agents.allow;
  o.link.insecure_plaintext = config.agents.insecure_plaintext;
  o.dispatch.ledger.heartbeat = std::chrono::milliseconds(config.agents.heartbeat_ms);
  o.dispatch.ledger.liveness = config.agents.liveness;
  o.dispatch.ledger.eval_heartbeat_max =
      std::chrono::milliseconds(config.agents.eval_heartbeat_max_ms);
  o.dispatch.checks.share = config.evaluation.recheck_share;
  o.dispatch.checks.speedup_ceiling = config.evaluation.speedup_ceiling;
  o.local_agents = config.agents.local;
  o.agent.backend = config.evaluation.backend;
  o.agent.slots = config.agents.slots_per_agent;
  o.agent.log_dir = log_dir;
  o.agent.heartbeat_ms = config.agents.heartbeat_ms;
  o.agent.liveness = config.agents.liveness;
  return o;
}

std::string default_db_path(const fs::path& home, const std::string& name) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  auto dir = home / "runs";
  fs::create_directories(dir);
  return (dir / (name + "-" + stamp + "-" + std::to_string(getpid()) + ".db")).string();
}

}  // namespace palladium
