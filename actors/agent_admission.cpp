#include "actors/agent_admission.hpp"

#include <algorithm>
#include <set>

namespace palladium {

namespace {

// Printable ASCII only, so names are safe in logs and in capability keys.
std::string check_text(std::string_view field, const std::string& value, size_t max_len,
                       bool may_be_empty) {
  if (value.empty() && !may_be_empty) return std::string(field) + " is empty";
  if (value.size() > max_len)
    return std::string(field) + " is " + std::to_string(value.size()) + " bytes (max " +
           std::to_string(max_len) + ")";
  for (char c : value)
    if (c < 0x20 || c > 0x7e) return std::string(field) + " has a non-printable character";
  return "";
}

}  // namespace

AgentAdmission::AgentAdmission(Options options)
    : options_(options), tokens_(options.registration_burst) {}

std::string AgentAdmission::validate(const wire::Hello& h, int max_slots, Capabilities* caps) {
  if (h.slots < 1 || h.slots > max_slots)
    return "slots " + std::to_string(h.slots) + " is outside [1, " + std::to_string(max_slots) +
           "]";
  if (h.backend != "interpret" && h.backend != "tpu")
    return "backend \"" + h.backend.substr(0, 32) + "\" is not interpret or tpu";
  for (auto [field, value, max_len, may_be_empty] :
       {std::tuple<const char*, const std::string*, size_t, bool>{"agent_id", &h.agent_id, 128,
                                                                  false},
        {"device_kind", &h.device_kind, 64, false},
        {"jax_version", &h.jax_version, 32, false},
        {"libtpu_version", &h.libtpu_version, 32, true}}) {
    if (auto e = check_text(field, *value, max_len, may_be_empty); !e.empty()) return e;
  }
  if (h.backend == "interpret" && h.device_kind != "cpu")
    return "device_kind \"" + h.device_kind + "\" with backend interpret (want cpu)";
  if (h.backend == "tpu" && h.device_kind == "cpu")
    return "device_kind cpu with backend tpu (a TPU agent names its TPU)";
  if (h.stages.empty()) return "stages is empty";
  if (h.stages.size() > all_stages().size()) return "stages lists more stages than exist";
  std::set<std::string> seen;
  for (const auto& s : h.stages)
    if (!seen.insert(s).second) return "stage \"" + s.substr(0, 32) + "\" is listed twice";
  std::string bad;
  auto set = stage_set(h.stages, &bad);
  if (!set) return "unknown stage \"" + bad.substr(0, 32) + "\"";
  if (caps) {
    caps->backend = h.backend;
    caps->device_kind = h.device_kind;
    caps->jax_version = h.jax_version;
    caps->libtpu_version = h.libtpu_version;
    caps->stages = *set;
  }
  return "";
}

AgentAdmission::Decision AgentAdmission::admit(const std::string& identity,
                                               const std::string& address, bool registered,
                                               const wire::Hello& hello, TimePoint now) {
  Decision d;
  d.reason = validate(hello, options_.max_slots, &d.caps);
  if (!d.reason.empty()) return d;
  auto known = known_.find(identity);
  if (registered && known != known_.end()) {
    auto& times = known->second.rehellos;
    while (!times.empty() && now - times.front() > options_.rehello_window) times.pop_front();
    if (static_cast<int>(times.size()) >= options_.rehello_limit) {
      d.reason = "re-registered " + std::to_string(times.size()) + " times within " +
                 std::to_string(options_.rehello_window.count()) + " s";
      return d;
    }
    times.push_back(now);
    d.admitted = true;
    return d;
  }
  if (!started_) {
    refilled_ = now;
    started_ = true;
  }
  double elapsed = std::chrono::duration<double>(now - refilled_).count();
  tokens_ = std::min<double>(options_.registration_burst,
                             tokens_ + std::max(0.0, elapsed) * options_.registrations_per_s);
  refilled_ = now;
  if (tokens_ < 1.0) {
    d.reason = "registration rate limit (" + std::to_string(options_.registrations_per_s) +
               "/s) exceeded; retry later";
    return d;
  }
  if (options_.max_agents_per_address > 0 &&
      per_address_[address] >= options_.max_agents_per_address) {
    d.reason = "address " + address + " already has " +
               std::to_string(options_.max_agents_per_address) + " agents";
    return d;
  }
  tokens_ -= 1.0;
  known_[identity].address = address;
  ++per_address_[address];
  d.admitted = true;
  return d;
}

void AgentAdmission::forget(const std::string& identity) {
  auto it = known_.find(identity);
  if (it == known_.end()) return;
  auto a = per_address_.find(it->second.address);
  if (a != per_address_.end() && --a->second <= 0) per_address_.erase(a);
  known_.erase(it);
}

}  // namespace palladium
