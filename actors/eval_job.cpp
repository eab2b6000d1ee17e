#include "actors/eval_job.hpp"

#include <utility>

namespace palladium {

wire::Job make_eval_job(const EvalSettings& s, int64_t candidate_id, std::string code) {
  wire::Job job;
  job.job_id = candidate_id;
  job.workload_id = s.workload_id;
  job.code = std::move(code);
  job.check_level = s.check_level;
  job.timeout_s = s.timeout_s;
  job.seeds = s.input_seeds;
  job.require_pallas = s.require_pallas;
  job.settings = s.judge;
  return job;
}

wire::Job make_retime_job(const EvalSettings& s, int64_t best_candidate_id,
                          std::vector<std::string> codes) {
  wire::Job job;
  job.job_id = -best_candidate_id;
  job.workload_id = s.workload_id;
  job.check_level = std::string(wire::kCheckFull);
  // Each candidate goes through the candidate process again for its artifact, then the
  // sitting: a little more than one evaluation's budget per candidate.
  job.timeout_s = s.timeout_s * static_cast<double>(codes.size() + 1);
  job.require_pallas = s.require_pallas;
  job.codes = std::move(codes);
  return job;
}

}  // namespace palladium
