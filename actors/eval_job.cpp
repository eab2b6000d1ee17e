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
  return job;
}

}  // namespace palladium
