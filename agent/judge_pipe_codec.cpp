#include "agent/judge_pipe_codec.hpp"

#include <msgpack.hpp>

#include "protocol/field_codec.hpp"
#include "protocol/wire_fields.hpp"

namespace palladium::agent {
namespace {

// One judge pipe message, packed as protocol/judge_pipe.json defines it.
template <typename M>
std::string pack(const M& message) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  codec::pack_message(pk, message);
  return std::string(buf.data(), buf.size());
}

// Copy strings out of the unpacker's buffer, so parsed objects never pin it.
bool never_reference(msgpack::type::object_type, std::size_t, void*) { return false; }

}  // namespace

std::string pack_eval_request(const wire::Job& job) {
  judge_pipe::Eval eval;
  eval.job_id = job.job_id;
  eval.workload_id = job.workload_id;
  eval.code = job.code;
  eval.check_level = job.check_level;
  eval.seeds = job.seeds;
  eval.require_pallas = job.require_pallas;
  eval.compile_tier = job.settings.compile_tier;
  eval.full_shapes = job.settings.full_shapes;
  eval.timeout_s = job.timeout_s > 0 ? job.timeout_s : 600.0;
  // The judge draws fresh seeds (as many as the job names); a replay is for `palladium eval`.
  eval.replay_seeds = false;
  return pack(eval);
}

std::string pack_retime_request(const wire::Job& job) {
  judge_pipe::Retime retime;
  retime.job_id = job.job_id;
  retime.workload_id = job.workload_id;
  retime.codes = job.codes;
  retime.require_pallas = job.require_pallas;
  retime.timeout_s = job.timeout_s > 0 ? job.timeout_s : 600.0;
  return pack(retime);
}

std::string pack_shutdown_request() { return pack(judge_pipe::Shutdown{}); }

struct JudgePipeDecoder::Unpacker {
  msgpack::unpacker unpacker{&never_reference, nullptr,
                             MSGPACK_UNPACKER_INIT_BUFFER_SIZE,
                             msgpack::unpack_limit(1 << 20, 1 << 20, 1u << 30, 1u << 30,
                                                   1u << 30, 32)};
};

JudgePipeDecoder::JudgePipeDecoder() : unpacker_(std::make_unique<Unpacker>()) {}
JudgePipeDecoder::~JudgePipeDecoder() = default;

char* JudgePipeDecoder::buffer(std::size_t n) {
  unpacker_->unpacker.reserve_buffer(n);
  return unpacker_->unpacker.buffer();
}

void JudgePipeDecoder::consumed(std::size_t n) { unpacker_->unpacker.buffer_consumed(n); }

std::vector<JudgeEvent> JudgePipeDecoder::take_events() {
  std::vector<JudgeEvent> events;
  msgpack::unpacker& up = unpacker_->unpacker;
  try {
    msgpack::object_handle oh;
    while (up.next(oh)) {
      const msgpack::object& o = oh.get();
      std::string type;
      std::string err = wire::read_envelope(o, &type, kJudgePipeVersion);
      if (!err.empty()) {
        events.emplace_back(JudgeProtocolError{"bad judge frame: " + err});
        return events;
      }
      wire::MapReader rd(o, type);
      JudgeEvent event;
      if (type == JudgeReady::kType) {
        JudgeReady ready;
        codec::read_fields(rd, &ready);
        event = std::move(ready);
      } else if (type == JudgeResult::kType) {
        JudgeResult result;
        codec::read_fields(rd, &result);
        event = std::move(result);
      } else if (type == JudgeRetimed::kType) {
        JudgeRetimed retimed;
        codec::read_fields(rd, &retimed);
        event = std::move(retimed);
      } else {
        events.emplace_back(
            JudgeProtocolError{"unexpected judge frame type \"" + type + "\""});
        return events;
      }
      if (!rd.ok()) {
        events.emplace_back(JudgeProtocolError{"bad judge frame: " + rd.error()});
        return events;
      }
      events.push_back(std::move(event));
    }
  } catch (const std::exception& e) {
    events.emplace_back(JudgeProtocolError{std::string("malformed judge stream: ") + e.what()});
  }
  return events;
}

}  // namespace palladium::agent
