// What a coordinator process (`run` or `sweep`) writes to DB.status.json
// about once a second (coordinator/status_file.hpp): its pid, its agents, their slots,
// the dispatch queue and the jobs in flight, asked of the dispatcher, and the
// LLM calls in flight and queued, asked of the LLM gateways. `status
// --live` and the web dashboard read it; without it they can only say that no
// coordinator is running.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "coordinator/status_file.hpp"

namespace palladium {

class LiveStatusWriter {
 public:
  LiveStatusWriter(caf::actor_system& sys, EvalDispatcherActor dispatcher,
                   std::vector<LlmGatewayActor> llm_gateways, std::filesystem::path path,
                   std::string command, int64_t sample_cap);
  ~LiveStatusWriter();  // removes the file: the coordinator is gone
  // Removes it now: a process that is abandoned (Coordinator::abandon) runs no destructor.
  void remove_file();

  // Writes the file when the last write is at least `every` old; failures are logged, not
  // thrown (the run goes on without its live status).
  // `running_runs` is asked only when the file is written.
  void maybe_write(const std::function<std::vector<int64_t>()>& running_runs,
                   std::chrono::milliseconds every = std::chrono::milliseconds(1000));

 private:
  caf::scoped_actor asker_;
  EvalDispatcherActor dispatcher_;
  std::vector<LlmGatewayActor> llm_gateways_;
  std::filesystem::path path_;
  std::string command_;
  int64_t sample_cap_;
  int64_t last_ms_ = 0;
};

}  // namespace palladium
