// The TPU agent: evaluates candidate kernels for a coordinator.
//
// One thread runs one zmq::poll loop over the coordinator link's DEALER socket
// (agent/coordinator_link.hpp: hello, heartbeats, reconnect backoff, results kept while
// disconnected), the response pipes of all judges and a stop pipe.
//
// Jobs go to idle judges (one job per judge; the slots' bookkeeping is agent/slot_pool.hpp,
// this loop does what it decides); a job arriving when all are busy is queued locally
// with a warning (the coordinator should not send more than `slots`). A job
// with no result within its timeout_s gets verdict "timeout"; a judge that exits, closes
// its pipe or breaks the protocol mid-job gets "crash" (exit status and log tail in the
// error). Either way the judge's process group is killed and a fresh judge started.
// Malformed frames from the coordinator are logged and dropped.
//
// Logging: spdlog logger "agent" on stderr, one info line per job.

#ifndef PALLADIUM_AGENT_AGENT_HPP_
#define PALLADIUM_AGENT_AGENT_HPP_

#include <memory>

#include "agent/agent_options.hpp"

namespace palladium::agent {

// Exit codes of run() / run_agent().
constexpr int kExitOk = 0;             // stopped on request (bye sent)
constexpr int kExitBadOptions = 1;     // invalid options
constexpr int kExitJudgeFailed = 2;  // a judge did not become ready at startup
                                       // (for --backend tpu: no TPU device)

class Agent {
 public:
  // Applies with_defaults(options). Does no I/O.
  explicit Agent(AgentOptions options);
  ~Agent();

  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Starts the judges, waits for them to be ready, then serves the coordinator until
  // request_stop(). On stop: sends `bye`, stops the judges, returns kExitOk. Returns
  // another kExit* code on a fatal startup error (logged). Call at most once.
  int run();

  // Makes run() return soon. Thread-safe and async-signal-safe; may be called before run().
  void request_stop();

  const AgentOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs an Agent in the calling thread with SIGTERM and SIGINT handled as request_stop()
// (bye reason "signal <n>"). Returns the exit code for `palladium agent`.
int run_agent(const AgentOptions& options);

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_AGENT_HPP_
