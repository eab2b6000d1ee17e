#include "actors/workload_search_actor.hpp"

#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "actors/messages.hpp"
#include "actors/record_conversions.hpp"
#include "llm/code_extractor.hpp"
#include "search/iterative_search.hpp"
#include "store/content_hash.hpp"

namespace palladium {
namespace {

struct SearchState {
  WorkloadSearchSpec spec;
  SearchPeers peers;
  std::unique_ptr<Strategy> search;
  std::map<int, int64_t> candidate_ids;  // sample index -> stored candidate id
  static inline const char* name = "workload_search";
};

using Self = caf::stateful_actor<SearchState>*;

void step(Self self);

void fail(Self self, const std::string& what) {
  spdlog::error("workload {} seed {}: {}", self->state.spec.brief.id, self->state.spec.seed, what);
  self->send(self->state.peers.run, progress_atom::value,
             ProgressEvent{ProgressEvent::workload_failed, self->state.spec.brief.id});
  self->quit(caf::make_error(caf::sec::runtime_error, what));
}

void finish_sample(Self self, int sample_index, const std::string& response,
                   const std::string& code, const EvalOutcome& outcome, bool reused) {
  auto& st = self->state;
  self->send(st.peers.run, progress_atom::value,
             ProgressEvent{ProgressEvent::evaluated, st.spec.brief.id,
                           outcome.verdict == Verdict::correct, reused});
  st.search->observe(sample_index, Observation{response, code, outcome});
  step(self);
}

void evaluate(Self self, int sample_index, int64_t candidate_id, const std::string& response,
              const std::string& code) {
  auto& st = self->state;
  self->request(st.peers.store, caf::infinite, find_eval_atom::value, candidate_id)
      .then(
          [=](MaybeEvaluation& found) {
            if (found.record) {
              finish_sample(self, sample_index, response, code, outcome_from_record(*found.record),
                            true);
              return;
            }
            auto& st = self->state;
            wire::Job job;
            job.job_id = candidate_id;  // unique per run; makes duplicates detectable
            job.workload_id = st.spec.brief.id;
            job.code = code;
            job.check_level = "full";
            job.timeout_s = st.spec.timeout_s;
            job.seeds = st.spec.input_seeds;
            job.require_pallas = st.spec.require_pallas;
            self->request(st.peers.dispatcher, caf::infinite, eval_atom::value, std::move(job))
                .then(
                    [=](wire::Result& result) {
                      auto record = record_from_result(candidate_id, result);
                      self->request(self->state.peers.store, caf::infinite, put_eval_atom::value, record)
                          .then([=](bool) {
                                  finish_sample(self, sample_index, response, code,
                                                outcome_from_record(record), false);
                                },
                                [=](caf::error& e) { fail(self, "storing an evaluation failed: " + to_string(e)); });
                    },
                    [=](caf::error& e) { fail(self, "evaluation failed: " + to_string(e)); });
          },
          [=](caf::error& e) { fail(self, "store lookup failed: " + to_string(e)); });
}

void generate(Self self, SampleRequest req) {
  auto& st = self->state;
  ChatRequest chat;
  chat.workload_id = st.spec.brief.id;
  chat.sample_index = req.sample_index;
  chat.seed = st.spec.seed;
  chat.system_prompt = req.system_prompt;
  chat.user_prompt = req.user_prompt;
  self->request(st.peers.llm_gateway, caf::infinite, generate_atom::value, chat)
      .then(
          [=](ChatResponse& response) {
            auto& st = self->state;
            SampleRecord cand;
            cand.run_id = st.spec.run_id;
            cand.workload = st.spec.brief.id;
            cand.method = st.spec.method;
            cand.seed = static_cast<int64_t>(st.spec.seed);
            cand.sample_index = req.sample_index;
            if (req.parent_sample) cand.parent_id = st.candidate_ids.at(*req.parent_sample);
            cand.prompt_system = req.system_prompt;
            cand.prompt_user = req.user_prompt;
            cand.response = response.text;
            cand.code = extract_code(response.text);
            auto call = llm_call_record(st.spec.run_id, st.spec.llm_provider, chat, response);
            auto cached = llm_response_record(st.spec.llm_provider, chat, response);
            self->request(st.peers.store, caf::infinite, put_sample_atom::value, cand, call, cached)
                .then(
                    [=](const PutSampleResult& put) {
                      const int64_t candidate_id = put.id;
                      self->state.candidate_ids[req.sample_index] = candidate_id;
                      self->send(self->state.peers.run, progress_atom::value,
                                 ProgressEvent{ProgressEvent::generated, cand.workload, false, false});
                      evaluate(self, req.sample_index, candidate_id, cand.response, cand.code);
                    },
                    [=](caf::error& e) { fail(self, "storing a candidate failed: " + to_string(e)); });
          },
          [=](caf::error& e) { fail(self, "LLM call failed: " + to_string(e)); });
}

void step(Self self) {
  auto& st = self->state;
  auto proposed = st.search->propose(1);
  std::optional<SampleRequest> req;
  if (!proposed.empty()) req = proposed.front();
  if (!req) {
    if (st.search->done()) {
      self->send(st.peers.run, progress_atom::value,
                 ProgressEvent{ProgressEvent::workload_done, st.spec.brief.id});
      self->quit();
    }
    return;
  }
  SampleKey key{st.spec.run_id, st.spec.brief.id, st.spec.method,
                static_cast<int64_t>(st.spec.seed), req->sample_index};
  self->request(st.peers.store, caf::infinite, find_sample_atom::value, key)
      .then(
          [=](MaybeSample& found) {
            // Resume identity includes the prompt: a stored answer to a
            // different prompt is not reused (storing the new sample
            // supersedes it).
            if (found.record &&
                found.record->prompt_hash == prompt_hash(req->system_prompt, req->user_prompt)) {
              // Already paid for in an earlier attempt at this run: reuse it.
              self->send(self->state.peers.run, progress_atom::value,
                         ProgressEvent{ProgressEvent::generated, found.record->workload, false, true});
              self->state.candidate_ids[req->sample_index] = found.record->id;
              evaluate(self, req->sample_index, found.record->id, found.record->response,
                       found.record->code);
            } else {
              generate(self, *req);
            }
          },
          [=](caf::error& e) { fail(self, "store lookup failed: " + to_string(e)); });
}

caf::behavior workload_search(Self self, WorkloadSearchSpec spec, SearchPeers peers) {
  self->state.search = std::make_unique<IterativeSearch>(spec.brief, Budget(spec.budget));
  self->state.spec = std::move(spec);
  self->state.peers = std::move(peers);
  step(self);
  return {
      // All work happens in response handlers; this keeps the behavior non-empty.
      [](beat_atom) {},
  };
}

}  // namespace

caf::actor spawn_workload_search(caf::actor_system& sys, WorkloadSearchSpec spec, SearchPeers peers) {
  return sys.spawn(workload_search, std::move(spec), std::move(peers));
}

}  // namespace palladium
