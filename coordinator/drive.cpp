#include "coordinator/drive.hpp"

#include "actors/errors.hpp"
#include "coordinator/interrupt.hpp"

namespace palladium {

void report_drive_failure(Coordinator& coordinator, const DriveOptions& options,
                          const caf::error& error) {
  const std::string why = error_message(error);
  if (options.running)
    for (auto run_id : options.running()) coordinator.mark_run(run_id, "failed", why);
  *options.err << "palladium " << options.command << ": " << options.failure << ": "
               << to_string(error) << "\n";
  options.err->flush();
}

void stop_driving(Coordinator& coordinator, const DriveOptions& options,
                  Coordinator::WaitEnd end, const std::string& lost) {
  const bool interrupted = end == Coordinator::WaitEnd::interrupted;
  const int signal = interrupt_signal();
  std::string reason;
  if (interrupted)
    reason = "interrupted by signal " + std::to_string(signal);
  else if (options.loss == Coordinator::AgentLoss::first)
    reason = "the agent exited (" + lost + ") before answering";
  else
    reason = "no local agents left";
  *options.err << "\n[palladium] " << reason << "; stopping"
               << (options.stop_hint.empty() ? "" : ". " + options.stop_hint) << "\n";
  // What the runs finished is stored; the mark says whether a rerun resumes them.
  if (options.running)
    for (auto run_id : options.running())
      coordinator.mark_run(run_id, interrupted ? "interrupted" : "incomplete",
                           interrupted ? "signal " + std::to_string(signal) : reason);
  if (options.cleanup) options.cleanup();
  coordinator.abandon(interrupted ? 128 + signal : 1);
}

}  // namespace palladium
