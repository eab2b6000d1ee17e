// libFuzzer target for the wire frame decoder (protocol/wire_protocol.hpp), run by
// scripts/bench_fuzz.sh (a benchmark, not a CTest test: 100k inputs take minutes).
//
// Oracles, beyond "no crash, no leak, no undefined behaviour" (ASan + UBSan):
//   - exactly one of a message and an error;
//   - a decoded frame re-encodes to bytes that decode to the same encoding (a fixed point);
//   - a decoded HELLO goes through the coordinator's admission checks without crashing.
// Built with -DWRITE_SEEDS it is instead a program that writes valid frames as a seed corpus.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "actors/agent_admission.hpp"
#include "protocol/wire_protocol.hpp"

using namespace palladium;

#ifndef WRITE_SEEDS

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  wire::DecodeResult r = wire::decode(bytes);
  if (r.ok() == !r.error.empty()) std::abort();
  if (!r.ok()) return 0;
  std::string once = wire::encode(*r.message);
  wire::DecodeResult again = wire::decode(once);
  if (!again.ok()) std::abort();
  if (wire::encode(*again.message) != once) std::abort();
  if (auto* hello = std::get_if<wire::Hello>(&*r.message)) {
    Capabilities caps;
    (void)AgentAdmission::validate(*hello, 64, &caps);
  }
  return 0;
}

#else

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::string dir = argv[1];
  wire::Hello h{"host-1", "tpu", "TPU v6 lite", "0.10.2", "0.0.42.1", 4, {"lint", "compile"}};
  wire::Job j;
  j.job_id = 7;
  j.lease = 99;
  j.workload_id = "8p";
  j.code = "def workload(a, b):\n  return a @ b\n";
  j.check_level = "full";
  j.timeout_s = 30;
  j.seeds = {0, 1};
  wire::Result r;
  r.job_id = 7;
  r.lease = 99;
  r.agent_id = "host-1";
  r.evaluation.verdict = Verdict::correct;
  r.evaluation.stage_ms = {{"lint", 1.5}};
  r.evaluation.kernel_ms = 1.0;
  wire::Message all[] = {h, wire::Heartbeat{"coordinator", 500}, j, r, wire::Bye{"a", "done"}};
  int i = 0;
  for (const auto& m : all) {
    std::ofstream(dir + "/seed-" + std::to_string(i++), std::ios::binary) << wire::encode(m);
  }
  return 0;
}

#endif
