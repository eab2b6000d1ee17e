// The agent's judge pipe codec without a process: requests packed from a job, answers decoded
// from a stream that arrives in pieces.

#include "agent/judge_pipe_codec.hpp"

#include <cstring>
#include <string>
#include <variant>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include "protocol/field_codec.hpp"

namespace palladium::agent {
namespace {

template <typename M>
std::string packed(const M& message, int version = kJudgePipeVersion) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  codec::pack_message(pk, message, version);
  return std::string(buf.data(), buf.size());
}

void feed(JudgePipeDecoder& d, const std::string& bytes) {
  std::memcpy(d.buffer(bytes.size()), bytes.data(), bytes.size());
  d.consumed(bytes.size());
}

TEST(JudgePipeCodecTest, AnswersSplitAtEveryByteAreDecodedWholeAndInOrder) {
  JudgeReady ready;
  ready.pid = 42;
  ready.backend = "interpret";
  ready.stages = {"lint", "numerics"};
  JudgeResult result;
  result.job_id = 7;
  result.evaluation.verdict = Verdict::correct;
  result.evaluation.kernel_ms = 1.5;
  const std::string stream = packed(ready) + packed(result);
  JudgePipeDecoder d;
  std::vector<JudgeEvent> events;
  for (char c : stream) {
    feed(d, std::string(1, c));
    for (auto& e : d.take_events()) events.push_back(std::move(e));
  }
  ASSERT_EQ(events.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<JudgeReady>(events[0]));
  EXPECT_EQ(std::get<JudgeReady>(events[0]).pid, 42);
  EXPECT_EQ(std::get<JudgeReady>(events[0]).stages.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<JudgeResult>(events[1]));
  EXPECT_EQ(std::get<JudgeResult>(events[1]).job_id, 7);
  EXPECT_EQ(std::get<JudgeResult>(events[1]).evaluation.verdict, Verdict::correct);
  EXPECT_EQ(std::get<JudgeResult>(events[1]).evaluation.kernel_ms, 1.5);
}

TEST(JudgePipeCodecTest, AnotherVersionOrAnUnknownTypeEndsTheStreamNamingWhy) {
  JudgeResult result;
  result.job_id = 1;
  JudgePipeDecoder d;
  feed(d, packed(result) + packed(result, kJudgePipeVersion + 1) + packed(result));
  auto events = d.take_events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<JudgeResult>(events[0]));
  ASSERT_TRUE(std::holds_alternative<JudgeProtocolError>(events[1]));
  EXPECT_NE(std::get<JudgeProtocolError>(events[1]).error.find("version"), std::string::npos)
      << std::get<JudgeProtocolError>(events[1]).error;

  JudgePipeDecoder other;
  feed(other, packed(judge_pipe::Eval{}));  // a request is never an answer
  events = other.take_events();
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<JudgeProtocolError>(events[0]));
  EXPECT_NE(std::get<JudgeProtocolError>(events[0]).error.find("\"eval\""), std::string::npos);
}

TEST(JudgePipeCodecTest, AnEvalRequestCarriesTheJobsSettingsAndADefaultTimeout) {
  wire::Job job;
  job.job_id = 9;
  job.workload_id = "8p";
  job.code = "def workload(x): return x\n";
  job.check_level = "full";
  job.seeds = {1, 2};
  job.settings.full_shapes = true;
  const std::string bytes = pack_eval_request(job);
  msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size());
  std::map<std::string, msgpack::object> m;
  oh.get().convert(m);
  EXPECT_EQ(m.at("type").as<std::string>(), "eval");
  EXPECT_EQ(m.at("job_id").as<int64_t>(), 9);
  EXPECT_EQ(m.at("full_shapes").as<bool>(), true);
  EXPECT_EQ(m.at("timeout_s").as<double>(), 600.0);
  EXPECT_EQ(m.at("replay_seeds").as<bool>(), false);
}

}  // namespace
}  // namespace palladium::agent
