// Fake peers of the search actors: an LLM gateway that answers every role,
// and an evaluator that holds each job for a while (so jobs overlap when a
// search keeps several in flight) and reads the verdict from the code.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "actors/eval_dispatcher.hpp"
#include "actors/interfaces.hpp"
#include "actors/messages.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium::testing {

struct Counters {
  std::atomic<int> llm_calls{0};
  std::atomic<int> jobs{0};
  std::atomic<int> jobs_pending{0};
  std::atomic<int> max_jobs_pending{0};
  std::string hopeless_workload;  // never correct
  // Side-by-side re-timing jobs (wire::Job::codes set): how many, and the last one's codes
  // (written by the evaluator before it answers, read by the test after the search ended).
  std::atomic<int> retimes{0};
  std::vector<std::string> retime_codes;
};

// Answers by role: plans and menus with text, scores with "SCORE: 9", code
// with a module whose verdict the fake evaluator reads from it.
inline LlmGatewayActor::behavior_type fake_gateway(LlmGatewayActor::pointer,
                                                  std::shared_ptr<Counters> c) {
  return {
      [=](generate_atom, const ChatRequest& req) {
        c->llm_calls++;
        ChatResponse r;
        r.model = "fake";
        const bool hopeless = c->hopeless_workload == req.workload_id;
        switch (req.role) {
          case SampleRole::plan:
            r.text = "Tile the matmul, plan " + std::to_string(req.sample_index);
            break;
          case SampleRole::menu:
            r.text = "<strategies>\n- use bigger tiles\n</strategies>";
            break;
          case SampleRole::score:
            r.text = "SCORE: 9";
            break;
          default:
            // Every third candidate is correct; the speed grows with the index.
            r.text = "```python\ndef workload(a, b):  # sample " + std::to_string(req.sample_index) +
                     (req.sample_index % 3 == 1 && !hopeless ? " CORRECT" : "") + "\n    return a @ b\n```\n";
        }
        r.prompt_tokens = 10;
        r.completion_tokens = 5;
        return r;
      },
      [=](stats_atom) { return LlmGatewayStats{}; },
  };
}

// Holds every job for `hold` before answering, so jobs overlap when the
// search keeps several in flight. Implements the dispatcher's contract
// (actors/interfaces.hpp): (eval_atom, Job) requests and (eval_atom, EvalBatch)
// batches, answered with EvalAnswers; two agents in its stats, no quarantines.
using release_atom = caf::atom_constant<caf::atom("release")>;
using FakeEvaluatorActor = EvalDispatcherActor::extend<caf::reacts_to<release_atom, int64_t>>;
struct HeldJob {
  caf::typed_response_promise<Evaluated> promise;
  caf::actor requester;  // set for a job of an EvalBatch
  Evaluated result;
};
struct EvalState {
  std::map<int64_t, HeldJob> held;
  static inline const char* name = "fake_eval";
};
inline void hold_job(FakeEvaluatorActor::stateful_pointer<EvalState> self,
                     const std::shared_ptr<Counters>& c,
                     std::chrono::milliseconds hold, const wire::Job& job, HeldJob h) {
  if (!job.codes.empty()) {
    // A re-timing: a sitting in which the second kernel (the evaluations' runner-up) is the
    // faster, 2.0 against 1.0 ms, each band +-1%, against a 1.5 ms baseline.
    c->retimes++;
    c->retime_codes = job.codes;
    judge_pipe::Retimed sitting;
    sitting.job_id = job.job_id;
    for (size_t i = 0; i < job.codes.size(); ++i) {
      const double ms = i == 0 ? 2.0 : 1.0;
      sitting.kernel_ms.push_back(ms);
      sitting.kernel_ms_low.push_back(ms * 0.99);
      sitting.kernel_ms_high.push_back(ms * 1.01);
    }
    sitting.baseline_ms = 1.5;
    sitting.timing_runs = 5;
    sitting.timing_kind = TimingKind::cpu_wall;
    h.result.sitting = std::move(sitting);
    self->state.held.emplace(job.job_id, std::move(h));
    c->jobs_pending++;  // released like any job
    self->delayed_send(self, hold, release_atom::value, job.job_id);
    return;
  }
  c->jobs++;
  int now = ++c->jobs_pending;
  int prev = c->max_jobs_pending.load();
  while (now > prev && !c->max_jobs_pending.compare_exchange_weak(prev, now)) {
  }
  h.result.agent.agent_id = "fake-agent";
  h.result.agent.backend = "interpret";
  Evaluation& r = h.result.evaluation;
  if (job.code.find("CORRECT") != std::string::npos) {
    r.verdict = Verdict::correct;
    r.stage = Stage::done;
    // Later samples are faster: the best keeps improving.
    const auto at = job.code.find("# sample ");
    const int n = at == std::string::npos ? 0 : std::stoi(job.code.substr(at + 9));
    r.kernel_ms = 1.0 / (1.0 + 0.1 * n);
    r.baseline_ms = 1.5;
    r.timing_kind = TimingKind::cpu_wall;
  } else {
    r.verdict = Verdict::numerics_mismatch;
    r.stage = Stage::numerics;
    r.error = "max_abs_err 2.0";
  }
  self->state.held.emplace(job.job_id, std::move(h));
  self->delayed_send(self, hold, release_atom::value, job.job_id);
}
inline FakeEvaluatorActor::behavior_type fake_evaluator(
    FakeEvaluatorActor::stateful_pointer<EvalState> self, std::shared_ptr<Counters> c,
    std::chrono::milliseconds hold) {
  return {
      [=](eval_atom, const wire::Job& job) -> caf::result<Evaluated> {
        auto rp = self->make_response_promise<Evaluated>();
        hold_job(self, c, hold, job, HeldJob{rp, caf::actor{}, Evaluated{}});
        return rp;
      },
      [=](eval_atom, const EvalBatch& batch) {
        auto requester = caf::actor_cast<caf::actor>(self->current_sender());
        for (const auto& job : batch.jobs)
          hold_job(self, c, hold, job,
                   HeldJob{caf::typed_response_promise<Evaluated>{}, requester, Evaluated{}});
      },
      [=](stats_atom) {
        DispatcherStats s;
        s.agents = 2;
        return s;
      },
      [=](stats_atom, bool) {
        DispatcherStats s;
        s.agents = 2;
        return s;
      },
      [=](quarantine_atom) { return std::vector<Quarantine>{}; },
      [](const ZmqInboundBatch&) {},  // it has no agents
      [=](release_atom, int64_t id) {
        auto it = self->state.held.find(id);
        if (it == self->state.held.end()) return;
        c->jobs_pending--;
        HeldJob& h = it->second;
        if (h.requester) {
          EvalAnswers answers;
          answers.answers.push_back(EvalAnswer{id, std::move(h.result), caf::error{}});
          self->send(caf::actor_cast<EvalRequester>(h.requester), evaluated_atom::value,
                     std::move(answers));
        } else {
          h.promise.deliver(std::move(h.result));
        }
        self->state.held.erase(it);
      },
  };
}

// An actor system with a real store actor over a temporary database that
// holds one run (run_id_).
class StoreFixture : public ::testing::Test {
 protected:
  StoreFixture() : sys_(cfg_) {}
  void SetUp() override {
    auto store = RunStore::open(db_.path());
    run_id_ = store->begin_or_resume_run("t", "config text");
    store_ = spawn_store(sys_, std::shared_ptr<RunStore>(std::move(store)));
  }
  void TearDown() override {
    caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
    sys_.await_all_actors_done();
  }

  TempDb db_;
  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  int64_t run_id_ = 0;
  StoreActor store_;
};

}  // namespace palladium::testing
