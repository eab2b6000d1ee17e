#include "actors/llm_gateway.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"

namespace palladium {
namespace {

using call_done_atom = caf::atom_constant<caf::atom("llm_done")>;
using tick_atom = caf::atom_constant<caf::atom("llm_tick")>;
// Its messages to itself: a call's completion (from the transport's thread) and the timer.
using GatewayImpl = LlmGatewayActor::extend<caf::reacts_to<call_done_atom, uint64_t, CallOutcome>,
                                            caf::reacts_to<tick_atom>>;
using TimePoint = std::chrono::steady_clock::time_point;
using Delivery = CallScheduler::Delivery;

struct GatewayState {
  std::shared_ptr<CallRunner> runner;
  std::function<TimePoint()> clock;
  std::unique_ptr<CallScheduler> scheduler;
  StoreActor store;  // null: no cache, no record
  std::chrono::milliseconds store_timeout{0};
  bool use_cache = true;
  // The price of a usage (the scheduler's own function); unset: costs are unknown (NULL).
  std::function<double(const Usage&)> cost;
  std::function<double(const Usage&)> cache_saved;
  std::map<uint64_t, caf::response_promise> waiting;  // ticket -> its requester
  std::map<uint64_t, ProviderCall> calls;             // in flight: what each call asked
  std::optional<TimePoint> timer_at;                  // the earliest tick already asked for
  int learned_concurrency = 0;                        // last logged AIMD window (whole calls)
  static inline const char* name = "llm_gateway";
};

using Self = GatewayImpl::stateful_pointer<GatewayState>;

bool truncated_reason(const std::string& finish_reason) {
  return finish_reason == "length" || finish_reason == "MAX_TOKENS";
}

std::string params_json(const GatewayState& st, const ChatRequest& req) {
  std::string params = st.runner->params_json(req);
  if (st.use_cache) return params;
  // --no-cache: a key of this run's own, so the fresh answer is stored beside the old one
  // instead of losing to it (the first write under a key wins).
  nlohmann::json j = nlohmann::json::parse(params);
  j["cache_scope"] = "run " + std::to_string(req.run_id);
  return j.dump();
}

ResponseKey cache_key(const GatewayState& st, const ChatRequest& req) {
  return response_key(st.runner->provider(), st.runner->model(), req.system_prompt,
                      req.user_prompt, params_json(st, req), req.sample_index,
                      static_cast<int64_t>(req.seed));
}

ChatResponse from_record(const LlmResponseRecord& r) {
  ChatResponse c;
  c.text = r.text;
  c.model = r.model_reported;
  c.prompt_tokens = static_cast<int>(r.prompt_tokens);
  c.completion_tokens = static_cast<int>(r.completion_tokens);
  c.thinking_tokens = static_cast<int>(r.thinking_tokens);
  c.cached_prompt_tokens = static_cast<int>(r.cached_prompt_tokens);
  c.tokens_estimated = r.tokens_estimated;
  c.latency_ms = r.latency_ms;
  c.finish_reason = r.finish_reason;
  c.truncated = truncated_reason(r.finish_reason);
  c.cost_usd = 0;  // paid for by the run that stored it
  c.cached = true;
  c.response_id = r.id;
  return c;
}

ChatResponse to_response(const Delivery& d) {
  ChatResponse r;
  r.text = d.completion.text;
  r.model = d.call.model;
  r.prompt_tokens = static_cast<int>(d.usage.prompt_tokens);
  r.completion_tokens = static_cast<int>(d.usage.completion_tokens);
  r.thinking_tokens = static_cast<int>(d.usage.thinking_tokens);
  r.cached_prompt_tokens = static_cast<int>(d.usage.cached_prompt_tokens);
  r.tokens_estimated = d.call.usage.estimated;
  r.latency_ms = d.call.latency_ms;
  r.finish_reason = d.completion.finish_reason;
  r.truncated = d.completion.truncated;
  r.cost_usd = d.cost_usd;
  // A second request for a sample already asked shares that answer and pays nothing.
  r.cached = !d.paid;
  return r;
}

LlmCallRecord call_record(const GatewayState& st, const ProviderCall& pc, const CallOutcome& o) {
  LlmCallRecord c;
  if (pc.request.run_id != 0) c.run_id = pc.request.run_id;
  c.provider = st.runner->provider();
  c.model = st.runner->model();
  c.role = pc.request.role;
  c.samples = static_cast<int>(pc.sample_indices.size());
  c.prompt_estimate =
      static_cast<int64_t>((pc.request.system_prompt.size() + pc.request.user_prompt.size() + 3) / 4);
  if (o.result) {
    const CallResult& r = *o.result;
    if (!r.model.empty()) c.model = r.model;
    c.prompt_tokens = r.usage.prompt_tokens;
    c.completion_tokens = r.usage.completion_tokens;
    c.thinking_tokens = r.usage.thinking_tokens;
    c.cached_prompt_tokens = r.usage.cached_prompt_tokens;
    c.tokens_estimated = r.usage.estimated;
    c.latency_ms = r.latency_ms;
    c.batch_id = r.batch_id;
    if (st.cache_saved) c.cache_saved_usd = st.cache_saved(r.usage);
  } else if (o.error) {
    c.status = "error";
    c.error_code = std::string(to_string(o.error->code()));
    c.error_text = o.error->what();  // providers redact keys from every message
    c.http_status = o.error->http_status();
  }
  return c;
}

// The call_id is the store's to set (put_answered_call).
LlmResponseRecord response_record(const GatewayState& st, const ProviderCall& pc,
                                  const Delivery& d) {
  ChatRequest req = pc.request;
  req.sample_index = d.sample_index;
  LlmResponseRecord r;
  r.provider = st.runner->provider();
  r.model = st.runner->model();
  r.params_json = params_json(st, req);
  r.sample_index = d.sample_index;
  r.seed = static_cast<int64_t>(req.seed);
  r.prompt_system = req.system_prompt;
  r.prompt_user = req.user_prompt;
  r.text = d.completion.text;
  r.model_reported = d.call.model;
  r.finish_reason = d.completion.finish_reason;
  if (r.finish_reason.empty() && d.completion.truncated) r.finish_reason = "length";
  r.prompt_tokens = d.usage.prompt_tokens;
  r.completion_tokens = d.usage.completion_tokens;
  r.thinking_tokens = d.usage.thinking_tokens;
  r.cached_prompt_tokens = d.usage.cached_prompt_tokens;
  r.tokens_estimated = d.usage.estimated;
  r.latency_ms = d.call.latency_ms;
  r.batch_id = d.call.batch_id;
  if (st.cost) r.cost_usd = d.cost_usd;
  return r;
}

void deliver(Self self, uint64_t ticket, ChatResponse response) {
  auto it = self->state.waiting.find(ticket);
  if (it == self->state.waiting.end()) return;
  it->second.deliver(std::move(response));
  self->state.waiting.erase(it);
}

void deliver_error(Self self, uint64_t ticket, const ProviderError& e) {
  auto it = self->state.waiting.find(ticket);
  if (it == self->state.waiting.end()) return;
  it->second.deliver(make_error(e.code(), e.what()));
  self->state.waiting.erase(it);
}

// One sample's answer: the paid delivery and the tickets that share it.
struct Answered {
  Delivery paid;
  std::vector<uint64_t> shared;
};

// Hands `r` to the paying ticket and, at no cost, to the tickets that share it.
void hand_out(Self self, const Answered& a, ChatResponse r) {
  for (uint64_t t : a.shared) {
    ChatResponse s = r;
    s.cached = true;
    s.cost_usd = 0;
    deliver(self, t, s);
  }
  deliver(self, a.paid.ticket, std::move(r));
}

// Hands out an answer whose store write returned `put`. If the key already held an answer
// (stored by someone else first), that stored answer is the one handed out, so the sample
// and the cache never disagree.
void hand_out_stored(Self self, const Answered& a, const PutResponseResult& put,
                     const ResponseKey& key) {
  ChatResponse response = to_response(a.paid);
  if (put.inserted) {
    response.response_id = put.id;
    hand_out(self, a, std::move(response));
    return;
  }
  self->request(self->state.store, self->state.store_timeout, find_response_atom::value, key)
      .then(
          [=](MaybeResponse& found) mutable {
            if (found.record) {
              ChatResponse stored = from_record(*found.record);
              stored.cached = false;  // this run did pay for a call
              stored.cost_usd = response.cost_usd;
              hand_out(self, a, std::move(stored));
            } else {
              hand_out(self, a, std::move(response));
            }
          },
          [=](caf::error& e) mutable {
            spdlog::error("llm cache: reading a stored answer failed: {}", to_string(e));
            hand_out(self, a, std::move(response));
          });
}

std::vector<Answered> group_answers(std::vector<Delivery> deliveries) {
  std::vector<Answered> answers;
  for (auto& d : deliveries) {
    if (d.paid || answers.empty() || answers.back().paid.sample_index != d.sample_index) {
      answers.push_back({std::move(d), {}});
    } else {
      answers.back().shared.push_back(d.ticket);
    }
  }
  return answers;
}

void arm_timer(Self self) {
  auto& st = self->state;
  auto wake = st.scheduler->next_wakeup();
  if (!wake) return;
  if (st.timer_at && *st.timer_at <= *wake) return;  // an earlier tick will poll anyway
  st.timer_at = *wake;
  const auto now = st.clock();
  auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - now) +
               std::chrono::milliseconds(1);
  if (delay < std::chrono::milliseconds(0)) delay = std::chrono::milliseconds(0);
  self->delayed_send(self, delay, tick_atom::value);
}

void fail_tickets(Self self, const std::vector<CallScheduler::Failure>& failures) {
  for (auto& f : failures) deliver_error(self, f.ticket, f.error);
}

// Starts the step's calls and fails its failures; a step from poll() delivers nothing.
void apply(Self self, CallScheduler::Step step) {
  auto& st = self->state;
  fail_tickets(self, step.fail);
  for (auto& s : step.start) {
    st.calls[s.call_id] = s.call;
    // The runner's completion may run on the transport's thread: it only sends a message.
    auto me = caf::actor_cast<GatewayImpl>(self);
    const uint64_t id = s.call_id;
    st.runner->start(s.call, [me, id](CallOutcome outcome) {
      caf::anon_send(me, call_done_atom::value, id, std::move(outcome));
    });
  }
  arm_timer(self);
}

void poll(Self self) { apply(self, self->state.scheduler->poll(self->state.clock())); }

void queue(Self self, const ChatRequest& req, caf::response_promise promise) {
  auto& st = self->state;
  const uint64_t ticket = st.scheduler->submit(req, st.clock());
  st.waiting.emplace(ticket, std::move(promise));
  poll(self);
}

// A call has ended. Every call that was sent is a row (it may be billed), failed ones too,
// and it is stored in one transaction with the answers it paid for: a coordinator killed at
// any moment leaves either nothing (the call is made again) or the call with its answers
// (a resume reuses them), never a paid call without its answers. Only then does anyone
// hear of it.
void finish_call(Self self, uint64_t call_id, const CallOutcome& outcome) {
  auto& st = self->state;
  auto it = st.calls.find(call_id);
  if (it == st.calls.end()) return;
  const ProviderCall pc = std::move(it->second);
  st.calls.erase(it);
  CallScheduler::Step step = st.scheduler->finish(call_id, outcome, st.clock());
  // The learned rate, logged whenever it moves by a whole call (AIMD on 429s).
  const int window = static_cast<int>(st.scheduler->stats().concurrency_window);
  if (window != st.learned_concurrency) {
    if (window < st.learned_concurrency) {
      spdlog::warn("{}: rate limited ({} 429s so far): now at most {} calls in flight",
                   st.runner->provider(), st.scheduler->stats().rate_limited, window);
    } else {
      spdlog::info("{}: calls succeed again: now at most {} calls in flight",
                   st.runner->provider(), window);
    }
    st.learned_concurrency = window;
  }
  auto answers = group_answers(std::move(step.deliver));
  auto failures = std::move(step.fail);
  step.fail.clear();
  apply(self, std::move(step));  // calls waiting on a slot need not wait for the disk
  if (!st.store) {
    for (auto& a : answers) hand_out(self, a, to_response(a.paid));
    fail_tickets(self, failures);
    poll(self);
    return;
  }
  LlmCallRecord row = call_record(st, pc, outcome);
  // Priced as the scheduler prices it; a failed call is not billed.
  if (st.cost) row.cost_usd = outcome.result ? st.cost(outcome.result->usage) : 0.0;
  std::vector<LlmResponseRecord> records;
  for (auto& a : answers) records.push_back(response_record(st, pc, a.paid));
  self->request(st.store, st.store_timeout, put_call_atom::value, row, records)
      .then(
          [=](const PutAnsweredCallResult& put) {
            for (size_t i = 0; i < answers.size(); ++i)
              hand_out_stored(self, answers[i], put.responses.at(i), records[i].key());
            fail_tickets(self, failures);
          },
          [=](caf::error& e) {
            spdlog::error("llm record: storing a call and its answers failed: {}",
                          to_string(e));
            for (auto& a : answers) hand_out(self, a, to_response(a.paid));
            fail_tickets(self, failures);
          });
  poll(self);
}

GatewayImpl::behavior_type llm_gateway(Self self, std::shared_ptr<CallRunner> runner,
                                       LlmGatewayOptions options, StoreActor store) {
  auto& st = self->state;
  st.runner = std::move(runner);
  st.clock = options.clock;
  st.store = std::move(store);
  st.store_timeout = options.timeouts.store;
  st.use_cache = options.use_cache;
  st.cache_saved = options.cache_saved;
  SchedulerOptions so = std::move(options.scheduler);
  st.cost = so.cost;
  if (so.provider.empty() || so.provider == "llm") so.provider = st.runner->provider();
  so.max_samples_per_call =
      std::max(1, std::min(so.max_samples_per_call, st.runner->max_samples_per_call()));
  st.scheduler = std::make_unique<CallScheduler>(std::move(so), st.clock());
  st.learned_concurrency = static_cast<int>(st.scheduler->stats().concurrency_window);
  return {
      [=](generate_atom, const ChatRequest& req) -> caf::result<ChatResponse> {
        auto& st = self->state;
        auto promise = self->make_response_promise<ChatResponse>();
        if (!st.store || !st.use_cache) {
          queue(self, req, promise);
          return promise;
        }
        self->request(st.store, st.store_timeout, find_response_atom::value, cache_key(st, req))
            .then(
                [=](MaybeResponse& found) mutable {
                  if (found.record) {
                    promise.deliver(from_record(*found.record));
                  } else {
                    queue(self, req, promise);
                  }
                },
                [=](caf::error& e) mutable {
                  spdlog::error("llm cache: lookup failed ({}); calling the provider",
                                to_string(e));
                  queue(self, req, promise);
                });
        return promise;
      },
      [=](call_done_atom, uint64_t call_id, CallOutcome& outcome) {
        if (outcome.error)
          spdlog::warn("{}: call failed: {}", self->state.runner->provider(),
                       outcome.error->what());
        finish_call(self, call_id, outcome);
      },
      [=](tick_atom) {
        auto& st = self->state;
        if (st.timer_at && st.clock() >= *st.timer_at) st.timer_at.reset();
        poll(self);
      },
      [=](stats_atom) {
        auto& st = self->state;
        LlmGatewayStats s;
        s.calls = st.scheduler->stats();
        s.spent_usd = st.scheduler->spend().realised();
        s.committed_usd = st.scheduler->spend().committed();
        s.stopped = st.scheduler->stopped().value_or("");
        return s;
      },
  };
}

}  // namespace

LlmGatewayActor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<CallRunner> runner,
                                  LlmGatewayOptions options, StoreActor store) {
  if (!options.detached)
    return sys.spawn(llm_gateway, std::move(runner), std::move(options), std::move(store));
  return sys.spawn<caf::detached>(llm_gateway, std::move(runner), std::move(options),
                                  std::move(store));
}

LlmGatewayActor spawn_llm_gateway(caf::actor_system& sys, std::shared_ptr<Provider> provider) {
  return spawn_llm_gateway(sys, std::shared_ptr<CallRunner>(make_local_runner(std::move(provider))));
}

}  // namespace palladium
