// AgentAdmission: whether a HELLO may register an agent.
//
// Two checks, both plain and clocked by the caller:
//   - the HELLO itself: slots in [1, max_slots], a known backend, printable fields of bounded
//     length, a device kind of "cpu" exactly for the interpret backend, known taxonomy stages
//     without repeats. A refused HELLO names the field and the rule.
//   - floods: new registrations spend a token bucket (registrations_per_s, burst); one identity
//     may re-register at most rehello_limit times per rehello_window; and where identities are
//     not keys (plaintext links) at most max_agents_per_address agents share one peer address.
// Thousands of throwaway HELLOs therefore register nothing beyond the bucket, and cannot take
// slots from real agents. Memory is bounded by the registered agents.
//
// Threading: not thread-safe; one owner (the dispatcher actor).
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <unordered_map>

#include "actors/capabilities.hpp"
#include "protocol/wire_protocol.hpp"

namespace palladium {

class AgentAdmission {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  struct Options {
    int max_slots = 64;  // a TPU host has at most 8 chips; CPU hosts get one slot per core
    double registrations_per_s = 500;  // refill of the new-registration bucket
    int registration_burst = 20000;    // bucket size: a whole fleet may join at once
    int rehello_limit = 10;            // re-registrations of one identity per window
    std::chrono::seconds rehello_window{60};
    int max_agents_per_address = 0;  // 0: no cap (identities are CURVE keys)
  };

  struct Decision {
    bool admitted = false;
    std::string reason;  // why not, naming the field or the limit; empty when admitted
    Capabilities caps;   // filled when admitted
  };

  explicit AgentAdmission(Options options);

  // Field checks only; "" when `hello` is acceptable, else the reason. Fills *caps on success.
  static std::string validate(const wire::Hello& hello, int max_slots, Capabilities* caps);

  // Decides on a HELLO from `identity` (the CURVE key, or the routing id on a plaintext link)
  // at peer `address`. `registered` says whether the identity is already a known agent. An
  // admitted HELLO is counted; call forget() when the agent is dropped.
  Decision admit(const std::string& identity, const std::string& address, bool registered,
                 const wire::Hello& hello, TimePoint now);

  void forget(const std::string& identity);

 private:
  struct Known {
    std::string address;
    std::deque<TimePoint> rehellos;
  };

  Options options_;
  double tokens_;
  TimePoint refilled_{};
  bool started_ = false;
  std::unordered_map<std::string, Known> known_;
  std::unordered_map<std::string, int> per_address_;
};

}  // namespace palladium
