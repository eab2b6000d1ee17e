// The plausibility gate on timings: a correct candidate whose speed is hard
// to believe is re-timed before it is published.
//
// A timing is suspect when its speedup is above a ceiling (default 10x, in the
// spirit of KernelBench's flag) or, for a TPU timing, when it beats the v6e
// roofline (search/roofline.hpp: a fraction above 1.0 is impossible for a
// kernel that does the workload's work). A CPU timing (cpu-wall) is held to
// the ceiling only: its roofline fraction means nothing.
//
// A suspect timing is re-timed on another slot. If the re-timing is suspect
// too, the speed holds: the first timing is kept and the candidate flagged
// implausible_speed for a person to look at. Otherwise the re-timing replaces
// the first. Both timings are stored either way (store/schema.sql,
// evaluations.retiming_json).
//
// Pure; no I/O.

#ifndef PALLADIUM_SEARCH_PLAUSIBILITY_HPP_
#define PALLADIUM_SEARCH_PLAUSIBILITY_HPP_

#include <optional>
#include <string>

#include "search/roofline.hpp"

namespace palladium {

inline constexpr double kDefaultSpeedupCeiling = 10.0;

struct TimingCheck {
  bool suspect = false;
  std::string reason;  // why, for the report; "" when not suspect
};

// `cost`: the workload's (none: the roofline is not checked). Throws
// std::invalid_argument unless speedup and kernel_ms are > 0 and the ceiling > 1.
TimingCheck check_timing(double speedup, double kernel_ms, const std::string& timing_kind,
                         const std::optional<WorkloadCost>& cost,
                         double ceiling = kDefaultSpeedupCeiling);

enum class Plausibility { plausible, retimed, implausible_speed };

// The stored spelling: "plausible", "retimed", "implausible_speed".
const char* to_string(Plausibility p);

struct GateDecision {
  Plausibility outcome = Plausibility::plausible;
  bool publish_second = false;  // the re-timing replaces the first timing
};

// What to publish after a suspect first timing was re-timed on another slot.
GateDecision resolve_retiming(const TimingCheck& second);

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_PLAUSIBILITY_HPP_
