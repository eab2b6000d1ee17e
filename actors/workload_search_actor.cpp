#include "actors/workload_search_actor.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "llm/code_extractor.hpp"
#include "search/response_parsing.hpp"
#include "store/content_hash.hpp"

namespace palladium {
namespace {

// A candidate sent for evaluation: what its answer is observed with.
struct PendingEval {
  SampleRequest request;
  int64_t candidate_id = 0;
  std::string text;
  std::string code;
  bool reused = false;
  bool truncated = false;  // the answer hit the output token limit
};

// A correct candidate with a speedup: one the side-by-side re-timing may take.
struct TimedCandidate {
  int64_t candidate_id = 0;
  double speedup = 0;
  std::string code;
};

struct SearchState {
  WorkloadSearchSpec spec;
  SearchPeers peers;
  std::unique_ptr<Strategy> strategy;
  bool loaded = false;
  bool pumping = false;
  bool quitting = false;
  bool reported_idle = false;
  int cap = 1;
  int in_flight = 0;                                // samples between propose and observe
  std::map<int, int64_t> sample_ids;                // sample index -> stored sample id
  std::map<int, SampleRecord> stored;               // loaded at start, by sample index
  std::map<int64_t, EvaluationRecord> stored_evals;  // loaded at start, by candidate id
  std::unordered_map<int64_t, PendingEval> evals;    // sent to the dispatcher, by job id
  caf::error dispatcher_gone;                        // set once the dispatcher terminated
  std::vector<TimedCandidate> timed;                 // correct and timed, in answer order
  int64_t retime_job = 0;  // the side-by-side re-timing's job id while it runs, else 0
  std::vector<TimedCandidate> retime_pair;           // its kernels: best first
  bool retimed = false;    // asked for (or not needed): the search may report done
  static inline const char* name = "workload_search";
};

using Self = WorkloadSearchActor::stateful_pointer<SearchState>;

void pump(Self self);

void note_timed(SearchState& st, int64_t candidate_id, const Evaluation& e,
                const std::string& code) {
  if (auto s = speedup(e)) st.timed.push_back(TimedCandidate{candidate_id, *s, code});
}

// Ends the search with `code` (actors/errors.hpp): the run counts it failed, and a rerun of
// the config resumes it from what is stored.
void fail(Self self, Errc code, const std::string& what) {
  auto& st = self->state;
  if (st.quitting) return;
  st.quitting = true;
  spdlog::error("workload {} seed {}: {}", st.spec.brief.id, st.spec.seed, what);
  self->quit(make_error(code, what));
}

// The same for a peer's failure `e`, whose code carries over (a request that timed out is
// deadline_exceeded); one with no Palladium code is a broken invariant.
void fail(Self self, const caf::error& e, const std::string& what) {
  fail(self, errc_of(e).value_or(Errc::internal), what + ": " + to_string(e));
}

void send_progress(Self self, ProgressEvent::Kind kind, const SampleRequest& r, bool reused,
                   bool correct = false) {
  auto& st = self->state;
  ProgressEvent ev{kind, st.spec.brief.id, correct, reused};
  ev.role = r.role;
  ev.units = st.strategy->budget().cost(r.role);
  self->send(st.peers.run, progress_atom::value, ev);
}

// The answer to `r` is persisted: hand it to the strategy.
void finish(Self self, const SampleRequest& r, Observation obs, bool reused) {
  auto& st = self->state;
  if (st.quitting) return;
  st.in_flight--;
  if (obs.outcome) {
    send_progress(self, ProgressEvent::evaluated, r, reused,
                  obs.outcome->verdict == Verdict::correct);
  }
  try {
    st.strategy->observe(r.sample_index, obs);
  } catch (const std::exception& e) {
    fail(self, Errc::internal, std::string("the strategy refused an answer: ") + e.what());
    return;
  }
  if (!st.pumping) pump(self);
}

// Jobs go to the dispatcher as one-job EvalBatches and come back in EvalAnswers (batched by
// the dispatcher): no response handler per job in flight (actors/messages.hpp says why).
void evaluate(Self self, const SampleRequest& r, int64_t candidate_id, const std::string& text,
              const std::string& code, bool reused, bool truncated) {
  auto& st = self->state;
  if (st.dispatcher_gone) {
    fail(self, Errc::unavailable, "evaluation failed: " + to_string(st.dispatcher_gone));
    return;
  }
  st.evals[candidate_id] = PendingEval{r, candidate_id, text, code, reused, truncated};
  EvalBatch batch;
  batch.jobs.push_back(make_eval_job(st.spec.eval, candidate_id, code));
  self->send(st.peers.dispatcher, eval_atom::value, std::move(batch));
}

void report_done(Self self) {
  auto& st = self->state;
  self->send(st.peers.run, status_atom::value, st.spec.index, st.strategy->status());
  st.quitting = true;
  self->quit();
}

// The sitting is stored, then the search reports done. A sitting that could not be held is
// stored with its error (the report then keeps the evaluations' ranking); no answer at all
// (the dispatcher gave up on it) is only logged: the search's results stand without it.
void on_sitting(Self self, const std::vector<TimedCandidate>& pair, EvalAnswer& a) {
  auto& st = self->state;
  st.retime_job = 0;
  if (a.error || !a.evaluated.sitting) {
    spdlog::warn("workload {} seed {}: no side-by-side re-timing of its best kernels: {}",
                 st.spec.brief.id, st.spec.seed,
                 a.error ? to_string(a.error) : std::string("the answer carried no sitting"));
    report_done(self);
    return;
  }
  const judge_pipe::Retimed& got = *a.evaluated.sitting;
  SittingRecord record;
  record.run_id = st.spec.run_id;
  record.workload = st.spec.brief.id;
  record.method = st.strategy->method();
  record.seed = static_cast<int64_t>(st.spec.seed);
  const bool held = got.error.empty() && got.kernel_ms.size() == pair.size() &&
                    got.kernel_ms_low.size() == pair.size() &&
                    got.kernel_ms_high.size() == pair.size();
  for (size_t i = 0; i < pair.size(); ++i) {
    SittingKernel k;
    k.candidate_id = pair[i].candidate_id;
    if (held) {
      k.kernel_ms = got.kernel_ms[i];
      k.kernel_ms_low = got.kernel_ms_low[i];
      k.kernel_ms_high = got.kernel_ms_high[i];
    }
    record.kernels.push_back(k);
  }
  if (held) {
    record.baseline_ms = got.baseline_ms;
    record.baseline_ms_low = got.baseline_ms_low;
    record.baseline_ms_high = got.baseline_ms_high;
  }
  record.timing_runs = got.timing_runs;
  record.timing_kind = spelling(got.timing_kind);
  record.agent_key = a.evaluated.agent.agent_key;
  record.error = held || !got.error.empty()
                     ? got.error
                     : "the sitting answered " + std::to_string(got.kernel_ms.size()) +
                           " times for " + std::to_string(pair.size()) + " kernels";
  self->request(st.peers.store, st.spec.timeouts.store, put_sitting_atom::value, std::move(record))
      .then([=](int64_t) { report_done(self); },
            [=](caf::error& e) { fail(self, e, "storing a re-timing failed"); });
}

// When the search is done: its best and runner-up correct kernels (by the evaluations'
// speedups) are timed again with the baseline in one sitting on one slot (judge/retiming.py),
// so that which one is published rests on one comparable measurement. False when there is
// nothing to re-time (fewer than two timed correct kernels, or no dispatcher).
bool ask_for_sitting(Self self) {
  auto& st = self->state;
  st.retimed = true;
  if (st.timed.size() < 2 || st.dispatcher_gone) return false;
  std::vector<TimedCandidate> order = st.timed;
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.speedup > b.speedup;
  });
  std::vector<TimedCandidate> pair{order[0], order[1]};
  EvalBatch batch;
  batch.jobs.push_back(
      make_retime_job(st.spec.eval, pair[0].candidate_id, {pair[0].code, pair[1].code}));
  st.retime_job = batch.jobs.back().job_id;
  st.retime_pair = std::move(pair);
  self->send(st.peers.dispatcher, eval_atom::value, std::move(batch));
  return true;
}

// The verdict is persisted before the strategy sees it.
void on_answers(Self self, EvalAnswers& got) {
  for (auto& a : got.answers) {
    auto& st = self->state;
    if (st.quitting) return;
    if (st.retime_job != 0 && a.job_id == st.retime_job) {
      on_sitting(self, st.retime_pair, a);
      continue;
    }
    auto it = st.evals.find(a.job_id);
    if (it == st.evals.end()) continue;
    PendingEval p = std::move(it->second);
    st.evals.erase(it);
    if (a.error) {
      fail(self, a.error, "evaluation failed");
      return;
    }
    EvaluationRecord record;
    record.candidate_id = p.candidate_id;
    record.evaluation = std::move(a.evaluated.evaluation);
    record.agent = std::move(a.evaluated.agent);
    record.checks = std::move(a.evaluated.checks);
    EvalOutcome outcome = EvalOutcome::from(record.evaluation);
    if (record.evaluation.verdict == Verdict::correct)
      note_timed(st, p.candidate_id, record.evaluation, p.code);
    self->request(st.peers.store, st.spec.timeouts.store, put_eval_atom::value, std::move(record))
        .then(
            [=](bool) {
              finish(self, p.request, Observation{p.text, p.code, outcome, p.truncated},
                     p.reused);
            },
            [=](caf::error& e) { fail(self, e, "storing an evaluation failed"); });
  }
}

SampleRecord sample_record(const SearchState& st, const SampleRequest& r, const std::string& text) {
  SampleRecord s;
  s.run_id = st.spec.run_id;
  s.workload = st.spec.brief.id;
  s.method = st.strategy->method();
  s.seed = static_cast<int64_t>(st.spec.seed);
  s.sample_index = r.sample_index;
  s.role = r.role;
  s.phase = r.phase;
  s.generation = r.generation;
  // A parent or plan is always observed, so stored, before its children are proposed.
  if (r.parent_sample) s.parent_id = st.sample_ids.at(*r.parent_sample);
  if (r.plan_sample) s.plan_id = st.sample_ids.at(*r.plan_sample);
  s.plan = r.plan;
  s.prompt_system = r.system_prompt;
  s.prompt_user = r.user_prompt;
  s.response = text;
  if (is_candidate_role(r.role)) s.code = extract_code(text);
  if (r.role == SampleRole::score) s.score = parse_translation_score(text);
  return s;
}

void generate(Self self, const SampleRequest& r) {
  auto& st = self->state;
  ChatRequest chat;
  chat.workload_id = st.spec.brief.id;
  chat.run_id = st.spec.run_id;
  chat.method = st.strategy->method();
  chat.role = r.role;
  chat.sample_index = r.sample_index;
  chat.seed = st.spec.seed;
  chat.system_prompt = r.system_prompt;
  chat.user_prompt = r.user_prompt;
  self->request(st.peers.llm_gateway, st.spec.timeouts.llm, generate_atom::value, chat)
      .then(
          [=](ChatResponse& response) {
            auto& st = self->state;
            SampleRecord sample;
            try {
              sample = sample_record(st, r, response.text);
            } catch (const std::exception& e) {
              fail(self, Errc::internal,
                   std::string("sample ") + std::to_string(r.sample_index) +
                       ": its parent or plan was never stored (" + e.what() + ")");
              return;
            }
            // The gateway owns every llm_calls and llm_responses row: it recorded the call and
            // the answer before it replied, and the sample only points at the answer. Only the
            // gateway knows the answer's cache key (its sampling parameters), so an answer it
            // could not record (response_id 0: it has no store, or the write failed and it
            // logged why) is kept in the sample's own text and in no cache row.
            if (response.response_id != 0) sample.response_id = response.response_id;
            self->request(st.peers.store, st.spec.timeouts.store, put_sample_atom::value, sample)
                .then(
                    [=](const PutSampleResult& put) {
                      self->state.sample_ids[r.sample_index] = put.id;
                      send_progress(self, ProgressEvent::generated, r, false);
                      if (is_candidate_role(r.role)) {
                        evaluate(self, r, put.id, sample.response, sample.code, false,
                                 response.truncated);
                      } else {
                        finish(self, r, Observation{sample.response, "", std::nullopt}, false);
                      }
                    },
                    [=](caf::error& e) { fail(self, e, "storing a sample failed"); });
          },
          [=](caf::error& e) { fail(self, e, "LLM call failed"); });
}

// One proposed request: reuse what the store holds for it, or ask for it.
void start(Self self, const SampleRequest& r) {
  auto& st = self->state;
  st.in_flight++;
  auto it = st.stored.find(r.sample_index);
  if (it == st.stored.end() ||
      it->second.prompt_hash != prompt_hash(r.system_prompt, r.user_prompt)) {
    // Nothing stored, or an answer to another prompt: storing the new answer
    // supersedes the old row.
    generate(self, r);
    return;
  }
  const SampleRecord rec = it->second;
  st.stored.erase(it);
  st.sample_ids[r.sample_index] = rec.id;
  send_progress(self, ProgressEvent::generated, r, true);
  if (!is_candidate_role(r.role)) {
    finish(self, r, Observation{rec.response, "", std::nullopt}, true);
    return;
  }
  // The stored answer's finish reason, so a resumed run writes the prompts it wrote before.
  const bool truncated = rec.finish_reason == "length" || rec.finish_reason == "MAX_TOKENS";
  auto ev = st.stored_evals.find(rec.id);
  if (ev != st.stored_evals.end()) {
    if (ev->second.evaluation.verdict == Verdict::correct)
      note_timed(st, rec.id, ev->second.evaluation, rec.code);
    finish(self, r,
           Observation{rec.response, rec.code, EvalOutcome::from(ev->second.evaluation), truncated},
           true);
    return;
  }
  evaluate(self, r, rec.id, rec.response, rec.code, true, truncated);
}

void pump(Self self) {
  auto& st = self->state;
  if (!st.loaded || st.quitting) return;
  st.pumping = true;
  for (;;) {
    const int room = st.cap - st.in_flight;
    if (room <= 0) break;
    std::vector<SampleRequest> batch;
    try {
      batch = st.strategy->propose(room);
    } catch (const std::exception& e) {
      st.pumping = false;
      fail(self, Errc::internal, std::string("the strategy failed: ") + e.what());
      return;
    }
    if (batch.empty()) break;
    for (const auto& r : batch) {
      start(self, r);
      if (st.quitting) return;
    }
  }
  st.pumping = false;
  if (st.in_flight > 0 || st.retime_job != 0) return;
  SearchStatus status = st.strategy->status();
  if (status.done) {
    if (!st.retimed && ask_for_sitting(self)) return;
    report_done(self);
  } else if (status.idle && !st.reported_idle) {
    st.reported_idle = true;
    self->send(st.peers.run, status_atom::value, st.spec.index, status);
  }
}

WorkloadSearchActor::behavior_type handlers(Self self) {
  return {
      [=](budget_atom, int limit, bool open) {
        auto& st = self->state;
        try {
          st.strategy->budget().set_limit(limit);
        } catch (const std::exception& e) {
          fail(self, Errc::failed_precondition,
               std::string("the run moved the budget below what is spent: ") + e.what());
          return;
        }
        st.strategy->budget().set_open(open);
        st.reported_idle = false;
        pump(self);
      },
      [=](evaluated_atom, EvalAnswers& got) { on_answers(self, got); },
      [=](inflight_atom, int cap) {
        self->state.cap = std::max(1, cap);
        pump(self);
      },
  };
}

WorkloadSearchActor::behavior_type workload_search(Self self, WorkloadSearchSpec spec,
                                                   SearchPeers peers) {
  auto& st = self->state;
  Budget budget(spec.budget, spec.method.counts);
  budget.set_open(spec.budget_open);
  try {
    st.strategy = make_strategy(spec.method, spec.brief, budget, spec.menus, spec.seed);
  } catch (const std::exception& e) {
    st.spec = spec;
    st.peers = peers;
    fail(self, Errc::invalid_argument, std::string("cannot build the strategy: ") + e.what());
    return handlers(self);  // a typed actor has no empty behavior; it has quit anyway
  }
  st.cap = std::max(1, spec.in_flight);
  st.spec = std::move(spec);
  st.peers = std::move(peers);
  // Batched evaluations have no response to carry an error if the dispatcher goes away.
  self->monitor(st.peers.dispatcher);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    if (down.source != st.peers.dispatcher.address()) return;
    st.dispatcher_gone =
        down.reason ? down.reason : make_error(Errc::unavailable, "the dispatcher stopped");
    if (!st.evals.empty())
      fail(self, Errc::unavailable, "evaluation failed: " + to_string(st.dispatcher_gone));
    else if (st.retime_job != 0) report_done(self);  // the results stand without the sitting
  });
  SampleKey key{st.spec.run_id, st.spec.brief.id, st.strategy->method(),
                static_cast<int64_t>(st.spec.seed), 0};
  self->request(st.peers.store, st.spec.timeouts.store, load_search_atom::value, key)
      .then(
          [=](StoredSearch& found) {
            auto& st = self->state;
            for (auto& s : found.samples) st.stored[s.sample_index] = std::move(s);
            for (auto& e : found.evaluations) st.stored_evals[e.candidate_id] = std::move(e);
            st.loaded = true;
            pump(self);
          },
          [=](caf::error& e) { fail(self, e, "loading the stored samples failed"); });
  return handlers(self);
}

}  // namespace

WorkloadSearchActor spawn_workload_search(caf::actor_system& sys, WorkloadSearchSpec spec,
                                          SearchPeers peers) {
  return sys.spawn(workload_search, std::move(spec), std::move(peers));
}

}  // namespace palladium
