// Reads judge pipe messages (a MessagePack stream) on stdin, decodes each with the codec
// generated from protocol/judge_pipe.json and writes it back, re-encoded, on stdout: the C++
// half of the cross-language round trip (tests/protocol/test_judge_pipe_roundtrip.py). A message
// the C++ side refuses ends the stream: its error goes to stderr and the exit status is 1.

#include <unistd.h>

#include <iostream>
#include <string>

#include <msgpack.hpp>

#include "protocol/field_codec.hpp"
#include "protocol/judge_pipe.hpp"
#include "protocol/wire_fields.hpp"

namespace {

using namespace palladium;

template <typename M>
bool echo(wire::MapReader& rd, msgpack::packer<msgpack::sbuffer>& pk) {
  M message;
  codec::read_fields(rd, &message);
  if (!rd.ok()) return false;
  codec::pack_message(pk, message);
  return true;
}

}  // namespace

int main() {
  msgpack::unpacker unpacker;
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  for (;;) {
    unpacker.reserve_buffer(1 << 16);
    ssize_t n = ::read(0, unpacker.buffer(), unpacker.buffer_capacity());
    if (n <= 0) break;
    unpacker.buffer_consumed(static_cast<std::size_t>(n));
  }
  msgpack::object_handle handle;
  while (unpacker.next(handle)) {
    const msgpack::object& o = handle.get();
    std::string type;
    std::string error = wire::read_envelope(o, &type, kJudgePipeVersion);
    if (!error.empty()) {
      std::cerr << error << "\n";
      return 1;
    }
    wire::MapReader rd(o, type);
    bool known = true;
    if (type == judge_pipe::Eval::kType) {
      echo<judge_pipe::Eval>(rd, pk);
    } else if (type == judge_pipe::Shutdown::kType) {
      echo<judge_pipe::Shutdown>(rd, pk);
    } else if (type == judge_pipe::Ready::kType) {
      echo<judge_pipe::Ready>(rd, pk);
    } else if (type == judge_pipe::Result::kType) {
      echo<judge_pipe::Result>(rd, pk);
    } else if (type == judge_pipe::Retime::kType) {
      echo<judge_pipe::Retime>(rd, pk);
    } else if (type == judge_pipe::Retimed::kType) {
      echo<judge_pipe::Retimed>(rd, pk);
    } else {
      known = false;
    }
    if (!known || !rd.ok()) {
      std::cerr << (known ? rd.error() : "unknown type \"" + type + "\"") << "\n";
      std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
      return 1;
    }
  }
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  return 0;
}
