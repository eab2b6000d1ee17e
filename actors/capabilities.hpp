// What an agent can evaluate, and what a job needs: the coordinator's capability matching.
//
// An agent's HELLO names its backend, device kind, JAX and libtpu versions and the stages its
// judges run (protocol/wire_protocol.hpp). A job goes only to an agent whose Capabilities
// satisfy the job's Requirement: same backend, the device kind and versions the run pins (an
// empty field in a Requirement matches anything), and every stage the job needs. Agents with
// equal Capabilities form one pool in the JobLedger, so matching costs a lookup per pool, not a
// scan of the agents.
//
// Plain values; no threads, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/taxonomy.hpp"

namespace palladium {

// A set of taxonomy stages as a bit mask (bit i = Stage i).
using StageSet = uint32_t;

StageSet stage_bit(Stage stage);
// The set named by `names`; nullopt (with *bad set to the offending name) for an unknown one.
std::optional<StageSet> stage_set(const std::vector<std::string>& names, std::string* bad);
// "lint,numerics": the names in pipeline order, for logs and error messages.
std::string stage_names(StageSet set);

struct Capabilities {
  std::string backend;         // "interpret" | "tpu"
  std::string device_kind;     // "cpu" for interpret
  std::string jax_version;
  std::string libtpu_version;  // "" without libtpu
  StageSet stages = 0;

  // A stable text form; equal Capabilities have equal keys.
  std::string key() const;
};

struct Requirement {
  std::string backend;         // required, exact
  std::string device_kind;     // "" = any
  std::string jax_version;     // "" = any
  std::string libtpu_version;  // "" = any
  StageSet stages = 0;         // all required

  bool satisfied_by(const Capabilities& caps) const;
  bool operator==(const Requirement& other) const;
  // "backend tpu, stages numerics,timing": what is missing reads naturally in a log line.
  std::string describe() const;
};

// The stages a job of `check_level` (wire::kCheckFull / kCheckCpu) needs from its agent. The
// libtpu compile is never required: CPU-check agents run it "where present".
StageSet required_stages(std::string_view check_level);

}  // namespace palladium
