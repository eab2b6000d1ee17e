// The agent's half of the judge pipe (protocol/judge_pipe.json): the requests it packs and
// the stream of answers it decodes. No process or fd here: agent/judge_process.hpp moves the
// bytes, this turns them into messages.

#ifndef PALLADIUM_AGENT_JUDGE_PIPE_CODEC_HPP_
#define PALLADIUM_AGENT_JUDGE_PIPE_CODEC_HPP_

#include <cstddef>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "protocol/judge_pipe.hpp"
#include "protocol/wire_protocol.hpp"

namespace palladium::agent {

// The judge's `ready` frame: its pid, versions, device and the taxonomy stages it runs (the
// agent forwards the last three in its HELLO).
using JudgeReady = judge_pipe::Ready;
// The judge's answer to one eval: the job id and the evaluation.
using JudgeResult = judge_pipe::Result;
// The judge's answer to one retime: the sitting (judge/retiming.py).
using JudgeRetimed = judge_pipe::Retimed;

// Something read from the response pipe.
struct JudgeEof {};  // the pipe closed: the child exited or closed fd 4
struct JudgeProtocolError {
  std::string error;  // malformed MessagePack or a frame that breaks the protocol
};
using JudgeEvent =
    std::variant<JudgeReady, JudgeResult, JudgeEof, JudgeProtocolError, JudgeRetimed>;

// The `eval` request for `job`: its id, workload, code, check level, seeds (their number: the
// judge draws fresh ones), require_pallas, settings and timeout (600 s when the job has none).
std::string pack_eval_request(const wire::Job& job);
// The `retime` request for a re-timing job (job.codes not empty).
std::string pack_retime_request(const wire::Job& job);
// The `shutdown` request.
std::string pack_shutdown_request();

// Decodes the judge's answer stream as it arrives, in pieces of any size. The judge is ours,
// but a broken one must not make the agent allocate without bound: the unpacker's limits cap
// every message.
class JudgePipeDecoder {
 public:
  JudgePipeDecoder();
  ~JudgePipeDecoder();
  JudgePipeDecoder(const JudgePipeDecoder&) = delete;
  JudgePipeDecoder& operator=(const JudgePipeDecoder&) = delete;

  // Room for at least `n` more bytes, to read into; then consumed(bytes actually read).
  char* buffer(std::size_t n);
  void consumed(std::size_t n);

  // Every whole message received so far, in order. A JudgeProtocolError is the last event
  // when the stream broke (the caller then kills the judge).
  std::vector<JudgeEvent> take_events();

 private:
  struct Unpacker;
  std::unique_ptr<Unpacker> unpacker_;
};

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_JUDGE_PIPE_CODEC_HPP_
