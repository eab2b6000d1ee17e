#include "actors/capabilities.hpp"

#include <string_view>

#include "protocol/wire_protocol.hpp"

namespace palladium {

StageSet stage_bit(Stage stage) { return StageSet{1} << static_cast<unsigned>(stage); }

std::optional<StageSet> stage_set(const std::vector<std::string>& names, std::string* bad) {
  StageSet set = 0;
  for (const auto& name : names) {
    auto stage = stage_from_string(name);
    if (!stage) {
      if (bad) *bad = name;
      return std::nullopt;
    }
    set |= stage_bit(*stage);
  }
  return set;
}

std::string stage_names(StageSet set) {
  std::string out;
  for (Stage s : all_stages()) {
    if (!(set & stage_bit(s))) continue;
    if (!out.empty()) out += ',';
    out += to_string(s);
  }
  return out.empty() ? "none" : out;
}

std::string Capabilities::key() const {
  // '\x1f' cannot appear in a validated field (actors/agent_admission.cpp allows printable
  // ASCII only), so the key is unambiguous.
  return backend + '\x1f' + device_kind + '\x1f' + jax_version + '\x1f' + libtpu_version +
         '\x1f' + std::to_string(stages);
}

bool Requirement::satisfied_by(const Capabilities& caps) const {
  if (caps.backend != backend) return false;
  if (!device_kind.empty() && caps.device_kind != device_kind) return false;
  if (!jax_version.empty() && caps.jax_version != jax_version) return false;
  if (!libtpu_version.empty() && caps.libtpu_version != libtpu_version) return false;
  return (caps.stages & stages) == stages;
}

bool Requirement::operator==(const Requirement& other) const {
  return stages == other.stages && backend == other.backend &&
         device_kind == other.device_kind && jax_version == other.jax_version &&
         libtpu_version == other.libtpu_version;
}

std::string Requirement::describe() const {
  std::string out = "backend " + backend;
  if (!device_kind.empty()) out += ", device " + device_kind;
  if (!jax_version.empty()) out += ", jax " + jax_version;
  if (!libtpu_version.empty()) out += ", libtpu " + libtpu_version;
  return out + ", stages " + stage_names(stages);
}

StageSet required_stages(std::string_view check_level) {
  StageSet set = 0;
  for (Stage s : {Stage::lint, Stage::import, Stage::trace, Stage::lower, Stage::numerics})
    set |= stage_bit(s);
  // The CPU tier stops after the interpret numerics; a full check also times the kernel.
  if (check_level != wire::kCheckCpu) set |= stage_bit(Stage::timing);
  return set;
}

}  // namespace palladium
