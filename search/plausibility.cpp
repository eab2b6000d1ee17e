#include "search/plausibility.hpp"

#include <cstdio>
#include <stdexcept>

namespace palladium {

TimingCheck check_timing(double speedup, double kernel_ms, const std::string& timing_kind,
                         const std::optional<WorkloadCost>& cost, double ceiling) {
  if (!(speedup > 0.0) || !(kernel_ms > 0.0))
    throw std::invalid_argument("check_timing: speedup and kernel time must be > 0");
  if (!(ceiling > 1.0)) throw std::invalid_argument("check_timing: the ceiling must be > 1");
  char buf[160];
  if (speedup > ceiling) {
    std::snprintf(buf, sizeof buf, "speedup %.2fx above the %.0fx ceiling", speedup, ceiling);
    return {true, buf};
  }
  const bool on_tpu = timing_kind.rfind("tpu", 0) == 0;
  if (on_tpu && cost) {
    auto roof = roofline_fraction(*cost, kernel_ms);
    if (roof.fraction > 1.0) {
      std::snprintf(buf, sizeof buf, "%.3f ms is %.2fx the v6e %s roofline (floor %.3f ms)",
                    kernel_ms, roof.fraction, roof.bound.c_str(), roof.floor_ms);
      return {true, buf};
    }
  }
  return {};
}

const char* to_string(Plausibility p) {
  switch (p) {
    case Plausibility::plausible:
      return "plausible";
    case Plausibility::retimed:
      return "retimed";
    case Plausibility::implausible_speed:
      return "implausible_speed";
  }
  return "";
}

GateDecision resolve_retiming(const TimingCheck& second) {
  if (second.suspect) return {Plausibility::implausible_speed, false};
  return {Plausibility::retimed, true};
}

}  // namespace palladium
