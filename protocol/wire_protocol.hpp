// Wire protocol between the coordinator (ZeroMQ ROUTER) and agents (DEALER), version 1.
// docs/architecture.md "Wire protocol" is the contract; this header is its C++ form.
//
// Frame grammar. A ZeroMQ message from an agent is one frame (the ROUTER also sees the
// routing-id frame first); the frame is exactly one MessagePack map, nothing after it:
//
//   frame       := map{ "type": str, "version": int(=kVersion), <fields of type> }
//   hello       := "agent_id": str, "backend": str, "device_kind": str,
//                  "jax_version": str, "slots": int
//   heartbeat   := "agent_id": str                     (the coordinator sends "coordinator")
//   job         := "job_id": int, "workload_id": str, "code": str, "check_level": str,
//                  "timeout_s": float, "seeds": array[int], "require_pallas": bool
//   result      := "job_id": int, "agent_id": str, "backend": str, "verdict": str,
//                  "stage": str, "error": str, "error_signature": str,
//                  "stdout": str, "stderr": str, "stage_ms": map[str -> float],
//                  "max_abs_err": float|nil, "max_rel_err": float|nil,
//                  "kernel_ms": float|nil, "baseline_ms": float|nil, "timing_kind": str
//   bye         := "agent_id": str, "reason": str
//
// Decoding rules: keys may come in any order; unknown keys are ignored (forward
// compatibility); every listed key is required except the float|nil ones, where a
// missing key reads as nil, and "require_pallas", where a missing key reads as true.
// A "float" accepts any MessagePack float or integer. An "int" must be a MessagePack
// integer that fits the C++ field.
//
// Thread safety: every function here is pure and safe to call from any thread.

#ifndef PALLADIUM_PROTOCOL_WIRE_PROTOCOL_HPP_
#define PALLADIUM_PROTOCOL_WIRE_PROTOCOL_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace palladium::wire {

constexpr int kVersion = 1;

struct Hello {
  std::string agent_id;
  std::string backend;      // "interpret" | "tpu"
  std::string device_kind;  // "cpu" for interpret, the TPU device kind otherwise
  std::string jax_version;
  int slots = 0;
};

struct Heartbeat {
  std::string agent_id;
};

struct Job {
  int64_t job_id = 0;
  std::string workload_id;
  std::string code;
  std::string check_level;  // "full"
  double timeout_s = 0.0;
  std::vector<int64_t> seeds;
  // A candidate without a pallas_call gets `no_pallas` unless this is false
  // (config evaluation.require_pallas). Optional on the wire: missing = true.
  bool require_pallas = true;
};

struct Result {
  int64_t job_id = 0;
  std::string agent_id;
  std::string backend;
  std::string verdict;  // spelling of search/verdict.hpp
  std::string stage;
  std::string error;
  std::string error_signature;
  std::string stdout_text;  // wire key "stdout"
  std::string stderr_text;  // wire key "stderr"
  std::map<std::string, double> stage_ms;
  std::optional<double> max_abs_err;
  std::optional<double> max_rel_err;
  std::optional<double> kernel_ms;
  std::optional<double> baseline_ms;
  std::string timing_kind;  // "cpu-wall" | "tpu-profiler" | "tpu-wall-fallback"
};

struct Bye {
  std::string agent_id;
  std::string reason;
};

using Message = std::variant<Hello, Heartbeat, Job, Result, Bye>;

// The wire spelling of a message's type: "hello", "heartbeat", "job", "result", "bye".
std::string_view type_name(const Message& message);

// Returns the MessagePack bytes of one frame for `message` (see the grammar above).
// Never fails.
std::string encode(const Message& message);

// Outcome of decode(): exactly one of `message` (on success) and a non-empty `error`.
struct DecodeResult {
  std::optional<Message> message;
  std::string error;  // human-readable, names what was wrong; empty on success

  bool ok() const { return message.has_value(); }
};

// Parses one frame. On success returns the message. On failure returns an error that names
// the problem, for example: `not a MessagePack map (got array)`, `missing field "job_id" in
// "job"`, `field "slots" in "hello" has type str, want int`, `unknown type "foo"`,
// `version 7 != 1`, `3 trailing bytes after the map`, `malformed MessagePack: ...`.
// Never throws and never crashes, whatever the bytes.
DecodeResult decode(std::string_view bytes);

}  // namespace palladium::wire

#endif  // PALLADIUM_PROTOCOL_WIRE_PROTOCOL_HPP_
