// drive(): the one way `run`, `sweep` and `eval` hand work to the coordinator's actors and
// wait for it. It sends one request, waits on the coordinator's loop (signals, local agents
// lost, the live status between polls) and ends in one of three ways:
//   - the answer came: returned;
//   - the actor answered with an error: the runs it drove are marked `failed`, the error is
//     printed as "palladium COMMAND: FAILURE: <error>", and returned, so the command exits
//     non-zero after its orderly shutdown (an error is never taken for "no answer");
//   - the wait ended early (a signal, or the local agents gone): the runs are marked
//     `interrupted` (a signal) or `incomplete`, the reason and the hint are printed, and the
//     process is abandoned (Coordinator::abandon) with 128 + the signal, or 1, since the
//     actors are blocked on work that will not come now.
//
// The request waits caf::infinite on purpose: how long a run or sweep may take is bounded by
// this loop (a signal, the agents), not by a timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "coordinator/coordinator.hpp"

namespace palladium {

struct DriveOptions {
  std::string command;    // names the messages: "palladium sweep: ..."
  std::string failure;    // what an error answer means, e.g. "the sweep failed"
  std::string stop_hint;  // said after stopping early, e.g. "rerun with --db X to resume"
  Coordinator::AgentLoss loss = Coordinator::AgentLoss::all;
  std::function<void()> poll;                     // between polls (the live status)
  std::function<std::vector<int64_t>()> running;  // the runs to mark when it ends without an answer
  std::function<void()> cleanup;                  // before the process is abandoned
  std::ostream* err = &std::cerr;
};

// The error path: marks the running runs `failed` and prints the error.
void report_drive_failure(Coordinator& coordinator, const DriveOptions& options,
                          const caf::error& error);

// The early end: marks, prints, cleans up and abandons the process.
[[noreturn]] void stop_driving(Coordinator& coordinator, const DriveOptions& options,
                               Coordinator::WaitEnd end, const std::string& lost);

template <typename Answer, typename Handle, typename... Request>
caf::expected<Answer> drive(Coordinator& coordinator, const Handle& target,
                            const DriveOptions& options, Request... request) {
  using Got = std::pair<std::optional<Answer>, caf::error>;
  auto answer = std::async(std::launch::async, [&sys = coordinator.system(), target, request...] {
    caf::scoped_actor self{sys};
    Got got;
    self->request(target, caf::infinite, request...)
        .receive([&](Answer& a) { got.first = std::move(a); },
                 [&](caf::error& e) { got.second = std::move(e); });
    return got;
  });
  std::string lost;
  auto end = coordinator.wait(
      [&] {
        if (answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return true;
        if (options.poll) options.poll();
        return false;
      },
      options.loss, &lost);
  if (end != Coordinator::WaitEnd::ready) stop_driving(coordinator, options, end, lost);
  Got got = answer.get();
  if (got.first) return std::move(*got.first);
  report_drive_failure(coordinator, options, got.second);
  return std::move(got.second);
}

}  // namespace palladium
