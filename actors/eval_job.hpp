// How a candidate becomes an evaluation job: the one place a wire::Job is
// built (the workload search actor only says which candidate and which code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire_protocol.hpp"

namespace palladium {

// What every job of one search shares (config section `evaluation`).
struct EvalSettings {
  std::string workload_id;
  std::string check_level{wire::kCheckFull};
  double timeout_s = 60;
  std::vector<int64_t> input_seeds{0, 1};
  bool require_pallas = true;
  JudgeSettings judge;
};

// The job for stored candidate `candidate_id` (its id is the job id, under which the
// dispatcher answers; agents see the dispatcher's own ticket instead).
wire::Job make_eval_job(const EvalSettings& settings, int64_t candidate_id, std::string code);

// The side-by-side re-timing of a workload's best candidates (`codes`, best first; each already
// judged correct) with the baseline, in one sitting on one slot (judge/retiming.py). Its job id
// is -(the best candidate's id): never a candidate's (those are positive), unique per
// workload's search.
wire::Job make_retime_job(const EvalSettings& settings, int64_t best_candidate_id,
                          std::vector<std::string> codes);

}  // namespace palladium
