// Wire protocol between the coordinator (ZeroMQ ROUTER) and agents (DEALER), version 3.
// docs/architecture.md "Wire protocol" is the contract; this header is its C++ form.
//
// Frame grammar. A ZeroMQ message from an agent is one frame (the ROUTER also sees the
// routing-id frame first); the frame is exactly one MessagePack map, nothing after it:
//
//   frame       := map{ "type": str, "version": int(=kVersion), <fields of type> }
//   hello       := "agent_id": str, "backend": str, "device_kind": str,
//                  "jax_version": str, "libtpu_version": str, "slots": int,
//                  "stages": array[str]
//   heartbeat   := "agent_id": str [, "interval_ms": int]
//   job         := "lease": int, "job_id": int, "workload_id": str, "code": str,
//                  "check_level": str, "timeout_s": float, "seeds": array[int],
//                  "require_pallas": bool, "codes": array[str], "compile_tier": str,
//                  "full_shapes": bool
//   result      := "job_id": int, "lease": int, "agent_id": str, "backend": str,
//                  <the evaluation's fields: protocol/judge_pipe.json "records" "evaluation">
//   retimed     := "job_id": int, "lease": int, "agent_id": str, "backend": str,
//                  <protocol/judge_pipe.json's "retimed" fields but job_id>
//   bye         := "agent_id": str, "reason": str
//
// Meaning. HELLO registers an agent: "stages" names the stages of protocol/taxonomy.json its
// judges run ("compile" only where libtpu is present), "libtpu_version" is "" without libtpu.
// The coordinator answers a refused HELLO with a BYE whose reason names the problem. A JOB
// carries a lease number, fresh for every dispatch; the agent echoes it in the RESULT, and the
// coordinator accepts a RESULT only from the agent holding that lease (a late result of a
// requeued job is dropped). The coordinator's HEARTBEAT may carry "interval_ms": from then on
// the agent heartbeats at that interval and counts the coordinator silent after `liveness` of
// them (the coordinator stretches the interval as the fleet grows, so heartbeat traffic stays
// bounded). The agent's agent_id is a display name only: the coordinator identifies an agent
// by its CURVE public key (actors/zmq_bridge.hpp), never by a name the agent chooses.
// check_level is "full" (every stage the agent runs) or "cpu_check" (the CPU tier of the
// cascade: everything up to and including the interpret numerics, no timing).
// A JOB whose "codes" is not empty is a side-by-side re-timing (judge/retiming.py): the
// agent's judge times those candidates (already judged correct) and the baseline in one
// sitting on one slot, and the agent answers with a RETIMED, not a RESULT. Version 3 added
// "codes" and RETIMED (a version-2 agent would have evaluated such a job's empty code).
//
// Decoding rules: keys may come in any order; unknown keys are ignored (forward
// compatibility); every listed key is required except the float|nil ones, where a
// missing key reads as nil, "require_pallas", where a missing key reads as true, "codes",
// where a missing key reads as empty (an evaluation), "compile_tier" and "full_shapes",
// where a missing key reads as JudgeSettings' default, and the
// bracketed "interval_ms", where a missing key reads as 0 (no change). The evaluation's keys
// follow protocol/judge_pipe.json: a key marked required must be there, any other reads as its
// default when missing; a verdict, stage, timing kind or numerics path must be a spelling of
// protocol/taxonomy.json (nil or "" for an absent optional one), or the frame is malformed.
// A "float" accepts any MessagePack float or integer. An "int" must be a MessagePack
// integer that fits the C++ field. Decoding checks types, not policy: HELLO limits (slots,
// name lengths, known stages) are the coordinator's (actors/agent_admission.hpp).
//
// Thread safety: every function here is pure and safe to call from any thread.

#ifndef PALLADIUM_PROTOCOL_WIRE_PROTOCOL_HPP_
#define PALLADIUM_PROTOCOL_WIRE_PROTOCOL_HPP_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/evaluation.hpp"

namespace palladium::wire {

constexpr int kVersion = 3;

// Check levels of a job (see "Meaning" above).
inline constexpr std::string_view kCheckFull = "full";
inline constexpr std::string_view kCheckCpu = "cpu_check";

struct Hello {
  std::string agent_id;
  std::string backend;      // "interpret" | "tpu"
  std::string device_kind;  // "cpu" for interpret, the TPU device kind otherwise
  std::string jax_version;
  std::string libtpu_version;       // "" when the agent has no libtpu
  int slots = 0;
  std::vector<std::string> stages;  // taxonomy stage names the agent's judges run
};

struct Heartbeat {
  std::string agent_id;
  int interval_ms = 0;  // coordinator -> agent only: the interval to use from now on; 0 = keep
};

struct Job {
  int64_t job_id = 0;
  int64_t lease = 0;  // set by the dispatcher for each dispatch; echoed in the result
  std::string workload_id;
  std::string code;
  std::string check_level;  // kCheckFull or kCheckCpu
  double timeout_s = 0.0;
  std::vector<int64_t> seeds;
  // A candidate without a pallas_call gets `no_pallas` unless this is false
  // (config evaluation.require_pallas). Optional on the wire: missing = true.
  bool require_pallas = true;
  // Not empty: a side-by-side re-timing of these candidates' codes ("Meaning" above); `code`
  // is then unused. Optional on the wire: missing = empty.
  std::vector<std::string> codes;
  // How the judge checks it (config evaluation.compile_tier, evaluation.full_shapes).
  // Optional on the wire: missing = JudgeSettings' defaults.
  JudgeSettings settings{};
};

struct Result {
  int64_t job_id = 0;
  int64_t lease = 0;  // the lease of the job frame this answers
  std::string agent_id;
  std::string backend;
  Evaluation evaluation;  // what the judge found (protocol/evaluation.hpp)
};

// The answer to a re-timing job: the sitting's figures (protocol/judge_pipe.json "retimed").
struct Retimed {
  int64_t job_id = 0;
  int64_t lease = 0;
  std::string agent_id;
  std::string backend;
  judge_pipe::Retimed sitting;  // its job_id is this frame's job_id
};

struct Bye {
  std::string agent_id;
  std::string reason;
};

using Message = std::variant<Hello, Heartbeat, Job, Result, Bye, Retimed>;

// The wire spelling of a message's type: "hello", "heartbeat", "job", "result", "bye",
// "retimed".
std::string_view type_name(const Message& message);

// Returns the MessagePack bytes of one frame for `message` (see the grammar above).
// Never fails.
std::string encode(const Message& message);

// A job's frame encoded once: every field but the lease is packed at construction, so a
// requeue or a second tier of the cascade costs only the lease's few bytes, not a new encode
// of the candidate's code. with_lease(n) == encode(job with lease = n), byte for byte, and so
// are the bytes share_with_lease(n) hands out.
class JobFrame {
 public:
  // A whole frame: bytes [offset, offset + size) of *buffer.
  struct Shared {
    std::shared_ptr<const std::string> buffer;
    std::size_t offset = 0;
    std::size_t size = 0;
    std::string_view bytes() const { return {buffer->data() + offset, size}; }
  };

  explicit JobFrame(const Job& job);
  // The same frame, packed into `storage` (its bytes are discarded, its capacity kept): a
  // buffer a finished frame gave back (take_storage), so a dispatch does not allocate, and
  // later free, a buffer the size of the candidate's code.
  JobFrame(const Job& job, std::string storage);
  // The buffer, for the next frame to be packed into, once no share of it is held any more
  // (ZeroMQ has released what it sent); an empty string while one is. Leaves the frame
  // without bytes: call it only on a frame that is done.
  std::string take_storage();
  // A fresh string holding the frame (copies the fields).
  std::string with_lease(int64_t lease) const;
  // The frame without copying the fields: the header and lease are written into room left in
  // front of them, and the caller shares the buffer (the ZmqBridge hands it to ZeroMQ as is).
  // The first call writes in place; a later one (a requeue) first copies the buffer, since the
  // bytes handed out before may still be on their way out on another thread.
  Shared share_with_lease(int64_t lease);
  std::size_t size() const { return buffer_->size() - kRoom; }

 private:
  // Room for the longest header + lease: a fixmap, "type", "job", "version", the version,
  // "lease" and a 9-byte int64 (34 bytes).
  static constexpr std::size_t kRoom = 48;
  std::shared_ptr<std::string> buffer_;  // kRoom bytes, then the packed pairs after "lease"
  bool handed_out_ = false;              // share_with_lease() gave the buffer away
};

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
