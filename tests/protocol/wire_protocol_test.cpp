#include "protocol/wire_protocol.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include "protocol/wire_fields.hpp"

namespace palladium::wire {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

template <class T>
T round_trip(const T& in) {
  DecodeResult r = decode(encode(Message{in}));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.error.empty());
  if (!r.ok()) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(*r.message));
  return std::get<T>(*r.message);
}

using Fields = std::vector<std::pair<std::string, std::function<void(Packer&)>>>;

// Packs a map from (key, packing-callback) pairs; lets tests build malformed frames.
std::string pack_map(Fields kvs) {
  msgpack::sbuffer buf;
  Packer pk(buf);
  pk.pack_map(static_cast<uint32_t>(kvs.size()));
  for (auto& [k, f] : kvs) {
    pk.pack(k);
    f(pk);
  }
  return std::string(buf.data(), buf.size());
}

std::function<void(Packer&)> str(std::string s) {
  return [s](Packer& pk) { pk.pack(s); };
}
std::function<void(Packer&)> integer(int64_t v) {
  return [v](Packer& pk) { pk.pack(v); };
}
std::function<void(Packer&)> nil() {
  return [](Packer& pk) { pk.pack_nil(); };
}
std::function<void(Packer&)> bool_value(bool v) {
  return [v](Packer& pk) { pk.pack(v); };
}

// The fields of a valid job frame, for tests that break exactly one of them.
Fields job_fields() {
  return {{"type", str("job")},           {"version", integer(kVersion)},
          {"lease", integer(9)},
          {"job_id", integer(1)},         {"workload_id", str("8p")},
          {"code", str("x")},             {"check_level", str("full")},
          {"timeout_s", integer(3)},      {"seeds", [](Packer& pk) { pk.pack_array(0); }}};
}

// job_fields() with `key` replaced (or removed when `value` is empty, or added when absent).
Fields job_fields_with(const std::string& key, std::function<void(Packer&)> value) {
  Fields fields = job_fields();
  auto it = std::find_if(fields.begin(), fields.end(), [&](auto& kv) { return kv.first == key; });
  if (it == fields.end()) {
    fields.emplace_back(key, std::move(value));
  } else if (value) {
    it->second = std::move(value);
  } else {
    fields.erase(it);
  }
  return fields;
}

Hello full_hello() {
  Hello h;
  h.agent_id = "host-1";
  h.backend = "tpu";
  h.device_kind = "TPU v6 lite";
  h.jax_version = "0.10.2";
  h.libtpu_version = "0.0.42.1";
  h.slots = 3;
  h.stages = {"lint", "compile", "numerics"};
  return h;
}

Job full_job() {
  Job j;
  j.job_id = -7;
  j.lease = 1LL << 50;
  j.workload_id = "8p";
  j.code = std::string("def workload(a, b):\n  return a @ b\n\0x", 38);
  j.check_level = "full";
  j.timeout_s = 30.5;
  j.seeds = {0, 1, -3, 1LL << 40};
  return j;
}

Result full_result() {
  Result r;
  r.job_id = 1234567890123;
  r.lease = 77;
  r.agent_id = "host-42";
  r.backend = "interpret";
  Evaluation& e = r.evaluation;
  e.verdict = Verdict::correct;
  e.stage = Stage::done;
  e.error = "";
  e.error_signature = "";
  e.stdout_text = "printed\n";
  e.stderr_text = "warned\n";
  e.stage_ms = {{"import", 12.5}, {"numerics", 300.25}};
  e.max_abs_err = 0.0078125;
  e.max_rel_err = 0.001;
  e.kernel_ms = 1.5;
  e.baseline_ms = 2.25;
  e.timing_kind = TimingKind::cpu_wall;
  e.seeds = {2718281828, 31};
  e.outside_pallas_fraction = 0.03;
  e.numerics_path = NumericsPath::mosaic_interpreter;
  e.timing_runs = 5;
  e.kernel_ms_low = 1.25;
  e.kernel_ms_high = 1.75;
  e.baseline_ms_low = 2.0;
  e.baseline_ms_high = 2.5;
  e.numerics_ok = true;
  e.structure_ok = false;
  e.dtype_exact = true;
  e.compile_finding = "libtpu: VMEM exhausted";
  return r;
}

TEST(WireProtocol, HelloRoundTrip) {
  Hello in = full_hello();
  Hello out = round_trip(in);
  EXPECT_EQ(out.agent_id, "host-1");
  EXPECT_EQ(out.backend, "tpu");
  EXPECT_EQ(out.device_kind, "TPU v6 lite");
  EXPECT_EQ(out.jax_version, "0.10.2");
  EXPECT_EQ(out.libtpu_version, "0.0.42.1");
  EXPECT_EQ(out.slots, 3);
  EXPECT_EQ(out.stages, in.stages);
}

TEST(WireProtocol, HeartbeatRoundTrip) {
  Heartbeat plain = round_trip(Heartbeat{"coordinator"});
  EXPECT_EQ(plain.agent_id, "coordinator");
  EXPECT_EQ(plain.interval_ms, 0);
  EXPECT_EQ(round_trip(Heartbeat{"coordinator", 2500}).interval_ms, 2500);
  // Without an interval the key is left out, so an agent-side heartbeat stays minimal.
  EXPECT_EQ(encode(Heartbeat{"a"}).find("interval_ms"), std::string::npos);
}

TEST(WireProtocol, JobRoundTrip) {
  Job in = full_job();
  Job out = round_trip(in);
  EXPECT_EQ(out.job_id, -7);
  EXPECT_EQ(out.lease, 1LL << 50);
  EXPECT_EQ(out.workload_id, "8p");
  EXPECT_EQ(out.code, in.code);  // embedded NUL survives
  EXPECT_EQ(out.check_level, "full");
  EXPECT_DOUBLE_EQ(out.timeout_s, 30.5);
  EXPECT_EQ(out.seeds, in.seeds);
  EXPECT_TRUE(out.require_pallas);
  EXPECT_TRUE(out.codes.empty()) << "an evaluation job has no codes";
  in.require_pallas = false;
  EXPECT_FALSE(round_trip(in).require_pallas);
  EXPECT_EQ(out.settings.compile_tier, "on");
  EXPECT_FALSE(out.settings.full_shapes);
  in.settings = JudgeSettings{"off", true};  // the run's evaluation.compile_tier, full_shapes
  Job judged = round_trip(in);
  EXPECT_EQ(judged.settings.compile_tier, "off");
  EXPECT_TRUE(judged.settings.full_shapes);
}

TEST(WireProtocol, ARetimingJobCarriesItsCodesAndItsAnswerTheSitting) {
  Job in = full_job();
  in.codes = {"def workload(x): return x", std::string("b\0c", 3)};
  EXPECT_EQ(round_trip(in).codes, in.codes);
  // The frame a dispatch shares is the same bytes with the codes in it.
  JobFrame frame(in);
  EXPECT_EQ(frame.with_lease(in.lease), encode(in));

  Retimed r;
  r.job_id = -41;
  r.lease = 9;
  r.agent_id = "host-1";
  r.backend = "interpret";
  r.sitting.job_id = -41;
  r.sitting.kernel_ms = {1.5, 2};
  r.sitting.kernel_ms_low = {1.25, 1.75};
  r.sitting.kernel_ms_high = {1.75, 2.5};
  r.sitting.baseline_ms = 5.0;
  r.sitting.baseline_ms_low = 4.5;
  r.sitting.timing_runs = 5;
  r.sitting.timing_kind = TimingKind::cpu_wall;
  Retimed out = round_trip(r);
  EXPECT_EQ(out.job_id, -41);
  EXPECT_EQ(out.lease, 9);
  EXPECT_EQ(out.sitting.job_id, -41) << "the sitting's job id is the frame's";
  EXPECT_EQ(out.sitting.kernel_ms, r.sitting.kernel_ms);
  EXPECT_EQ(out.sitting.kernel_ms_high, r.sitting.kernel_ms_high);
  EXPECT_EQ(out.sitting.baseline_ms, 5.0);
  EXPECT_EQ(out.sitting.baseline_ms_low, 4.5);
  EXPECT_FALSE(out.sitting.baseline_ms_high.has_value());
  EXPECT_EQ(out.sitting.timing_runs, 5);
  EXPECT_EQ(out.sitting.timing_kind, TimingKind::cpu_wall);
  EXPECT_EQ(out.sitting.error, "");
  // A sitting not held: no times, the reason.
  Retimed failed;
  failed.sitting.error = "candidate 1 is no longer correct here";
  Retimed back = round_trip(failed);
  EXPECT_EQ(back.sitting.error, failed.sitting.error);
  EXPECT_TRUE(back.sitting.kernel_ms.empty());
  EXPECT_FALSE(back.sitting.timing_kind.has_value());
}

TEST(WireProtocol, ResultRoundTripWithOptionalsPresent) {
  Result in = full_result();
  Result out = round_trip(in);
  EXPECT_EQ(out.job_id, in.job_id);
  EXPECT_EQ(out.lease, 77);
  EXPECT_EQ(out.agent_id, in.agent_id);
  EXPECT_EQ(out.backend, in.backend);
  const Evaluation& a = in.evaluation;
  const Evaluation& b = out.evaluation;
  EXPECT_EQ(b.verdict, Verdict::correct);
  EXPECT_EQ(b.stage, Stage::done);
  EXPECT_EQ(b.stdout_text, a.stdout_text);
  EXPECT_EQ(b.stderr_text, a.stderr_text);
  EXPECT_EQ(b.stage_ms, a.stage_ms);
  EXPECT_EQ(b.max_abs_err, a.max_abs_err);
  EXPECT_EQ(b.max_rel_err, a.max_rel_err);
  EXPECT_EQ(b.kernel_ms, a.kernel_ms);
  EXPECT_EQ(b.baseline_ms, a.baseline_ms);
  EXPECT_EQ(b.timing_kind, TimingKind::cpu_wall);
  EXPECT_EQ(b.seeds, a.seeds);
  EXPECT_EQ(b.outside_pallas_fraction, a.outside_pallas_fraction);
  EXPECT_EQ(b.numerics_path, NumericsPath::mosaic_interpreter);
  EXPECT_EQ(b.timing_runs, 5);
  EXPECT_EQ(b.kernel_ms_low, 1.25);
  EXPECT_EQ(b.kernel_ms_high, 1.75);
  EXPECT_EQ(b.baseline_ms_low, 2.0);
  EXPECT_EQ(b.baseline_ms_high, 2.5);
  EXPECT_EQ(b.numerics_ok, std::optional<bool>(true));
  EXPECT_EQ(b.structure_ok, std::optional<bool>(false));
  EXPECT_EQ(b.dtype_exact, std::optional<bool>(true));
  EXPECT_EQ(b.compile_finding, "libtpu: VMEM exhausted");
}

// The minimal result of the earlier grammar: the evaluation's keys marked required only.
Fields minimal_result_fields() {
  return {{"type", str("result")},   {"version", integer(kVersion)},
          {"job_id", integer(5)},     {"lease", integer(6)},
          {"agent_id", str("a")},     {"backend", str("interpret")},
          {"verdict", str("correct")}, {"stage", str("done")},
          {"error", str("")},         {"error_signature", str("")},
          {"stdout", str("")},        {"stderr", str("")},
          {"stage_ms", [](Packer& pk) { pk.pack_map(0); }},
          {"timing_kind", str("cpu-wall")}};
}

TEST(WireProtocol, AResultWithoutTheJudgesFindingsDecodesAsEmpty) {
  // An agent written against the earlier grammar sends none of the optional evaluation fields.
  Fields fields = minimal_result_fields();
  DecodeResult r = decode(pack_map(fields));
  ASSERT_TRUE(r.ok()) << r.error;
  const Evaluation& out = std::get<Result>(*r.message).evaluation;
  EXPECT_TRUE(out.seeds.empty());
  EXPECT_FALSE(out.outside_pallas_fraction.has_value());
  EXPECT_FALSE(out.numerics_path.has_value());
  EXPECT_EQ(out.timing_runs, 1);  // the schema's default
  EXPECT_FALSE(out.numerics_ok.has_value());
  EXPECT_FALSE(out.compile_finding.has_value()) << "no compile tier ran: not the same as ''";
  // Present with the wrong type, a finding is refused like any other field.
  fields.emplace_back("numerics_path", integer(3));
  EXPECT_FALSE(decode(pack_map(fields)).ok());
}

TEST(WireProtocol, EnumSpellingsBecomeEnumsAtDecodeAndUnknownOnesAreRefused) {
  Fields untimed = minimal_result_fields();
  untimed[7] = {"stage", [](Packer& pk) { pk.pack_nil(); }};
  untimed[13] = {"timing_kind", str("")};  // the earlier spelling of "untimed"
  DecodeResult r = decode(pack_map(untimed));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(std::get<Result>(*r.message).evaluation.stage.has_value());
  EXPECT_FALSE(std::get<Result>(*r.message).evaluation.timing_kind.has_value());

  Fields bad = minimal_result_fields();
  bad[6] = {"verdict", str("totally_correct_trust_me")};
  r = decode(pack_map(bad));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error,
            "field \"verdict\" in \"result\" has unknown value \"totally_correct_trust_me\", want "
            "a verdict of protocol/taxonomy.json");
  bad = minimal_result_fields();
  bad[13] = {"timing_kind", str("tpu-guess")};
  r = decode(pack_map(bad));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("\"timing_kind\" in \"result\" has unknown value \"tpu-guess\""),
            std::string::npos)
      << r.error;
  bad = minimal_result_fields();
  bad.emplace_back("numerics_path", str("eyeballed"));
  EXPECT_FALSE(decode(pack_map(bad)).ok());
}

TEST(WireProtocol, EveryEvaluationFieldIsOnTheWire) {
  // The frame carries exactly the keys protocol/judge_pipe.json gives the evaluation.
  std::string bytes = encode(full_result());
  msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
  std::map<std::string, msgpack::object> m;
  h.get().convert(m);
  EXPECT_EQ(m.size(), 6 + kEvaluationFieldCount);
  Evaluation none;
  visit_fields(none, [&](const FieldSpec& spec, const auto&) {
    EXPECT_TRUE(m.count(std::string(spec.key))) << spec.key;
  });
}

TEST(WireProtocol, ResultOptionalsNilWhenAbsent) {
  Result in = full_result();
  in.evaluation.max_abs_err.reset();
  in.evaluation.max_rel_err.reset();
  in.evaluation.kernel_ms.reset();
  in.evaluation.baseline_ms.reset();
  in.evaluation.stage_ms.clear();
  in.evaluation.numerics_ok.reset();
  std::string bytes = encode(in);
  // The absent optionals are on the wire as nil, not left out.
  msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
  std::map<std::string, msgpack::object> m;
  h.get().convert(m);
  ASSERT_TRUE(m.count("kernel_ms"));
  EXPECT_TRUE(m["kernel_ms"].is_nil());
  EXPECT_EQ(m["stdout"].as<std::string>(), "printed\n");
  EXPECT_EQ(m["type"].as<std::string>(), "result");
  EXPECT_EQ(m["version"].as<int>(), kVersion);

  ASSERT_TRUE(m.count("numerics_ok"));
  EXPECT_TRUE(m["numerics_ok"].is_nil());

  Evaluation out = round_trip(in).evaluation;
  EXPECT_FALSE(out.max_abs_err.has_value());
  EXPECT_FALSE(out.max_rel_err.has_value());
  EXPECT_FALSE(out.kernel_ms.has_value());
  EXPECT_FALSE(out.baseline_ms.has_value());
  EXPECT_TRUE(out.stage_ms.empty());
  EXPECT_FALSE(out.numerics_ok.has_value());
}

TEST(WireProtocol, JobFrameIsTheSameBytesAsEncode) {
  Job job = full_job();
  JobFrame frame(job);
  for (int64_t lease : {int64_t{0}, int64_t{1}, int64_t{300}, int64_t{1} << 40, int64_t{-5}}) {
    job.lease = lease;
    EXPECT_EQ(frame.with_lease(lease), encode(job)) << "lease " << lease;
  }
  DecodeResult r = decode(frame.with_lease(12));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(std::get<Job>(*r.message).lease, 12);
  EXPECT_EQ(std::get<Job>(*r.message).code, job.code);
}

TEST(WireProtocol, SharedJobFramesAreTheSameBytesAsEncodeAndNeverRewritten) {
  Job job = full_job();
  JobFrame frame(job);
  std::vector<std::pair<JobFrame::Shared, std::string>> handed;
  for (int64_t lease : {int64_t{1}, int64_t{300}, int64_t{1} << 40, int64_t{-5}, int64_t{0},
                        std::numeric_limits<int64_t>::max()}) {
    job.lease = lease;
    JobFrame::Shared shared = frame.share_with_lease(lease);
    EXPECT_EQ(std::string(shared.bytes()), encode(job)) << "lease " << lease;
    EXPECT_EQ(frame.with_lease(lease), encode(job)) << "lease " << lease;
    handed.emplace_back(shared, encode(job));
  }
  // Frames handed out earlier (maybe still being sent) keep their bytes.
  for (const auto& [shared, bytes] : handed) EXPECT_EQ(std::string(shared.bytes()), bytes);
}

// A frame's buffer comes back for reuse only when no share of it is held (ZeroMQ may still be
// sending it), and a frame packed into reused storage is the same bytes as a fresh one.
TEST(WireProtocol, JobFrameStorageIsReusedOnlyWhenNoShareIsHeld) {
  Job job = full_job();
  JobFrame first(job);
  JobFrame::Shared held = first.share_with_lease(7);
  std::string kept(held.bytes());
  EXPECT_TRUE(first.take_storage().empty()) << "a share is still held";
  EXPECT_EQ(std::string(held.bytes()), kept);
  held = JobFrame::Shared{};
  std::string storage = first.take_storage();
  EXPECT_GE(storage.capacity(), job.code.size());
  const char* bytes = storage.data();
  Job other = full_job();
  other.job_id = 99;
  other.code = "short";
  JobFrame second(other, std::move(storage));
  JobFrame::Shared shared = second.share_with_lease(3);
  other.lease = 3;
  EXPECT_EQ(std::string(shared.bytes()), encode(other));
  EXPECT_EQ(shared.buffer->data(), bytes) << "packed into the storage given, not a new buffer";
}

TEST(WireProtocol, ByeRoundTrip) {
  Bye out = round_trip(Bye{"host-1", "SIGTERM"});
  EXPECT_EQ(out.agent_id, "host-1");
  EXPECT_EQ(out.reason, "SIGTERM");
}

TEST(WireProtocol, TypeNames) {
  EXPECT_EQ(type_name(Hello{}), "hello");
  EXPECT_EQ(type_name(Heartbeat{}), "heartbeat");
  EXPECT_EQ(type_name(Job{}), "job");
  EXPECT_EQ(type_name(Result{}), "result");
  EXPECT_EQ(type_name(Bye{}), "bye");
  EXPECT_EQ(type_name(Retimed{}), "retimed");
}

TEST(WireProtocol, PythonStyleFrameDecodes) {
  // Integers where floats are expected, keys in another order, an extra key: all accepted.
  std::string bytes = pack_map({{"seeds", [](Packer& pk) { pk.pack(std::vector<int>{1, 2}); }},
                                {"timeout_s", integer(30)},
                                {"version", integer(kVersion)},
                                {"code", str("x")},
                                {"check_level", str("full")},
                                {"workload_id", str("8p")},
                                {"job_id", integer(5)},
                                {"lease", integer(2)},
                                {"extra", str("ignored")},
                                {"type", str("job")}});
  DecodeResult r = decode(bytes);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_DOUBLE_EQ(std::get<Job>(*r.message).timeout_s, 30.0);
  EXPECT_TRUE(std::get<Job>(*r.message).require_pallas) << "missing require_pallas means true";
  EXPECT_EQ(std::get<Job>(*r.message).settings.compile_tier, "on") << "missing: the default";
  EXPECT_FALSE(std::get<Job>(*r.message).settings.full_shapes);
}


void expect_error(std::string_view bytes, std::string_view needle) {
  DecodeResult r = decode(bytes);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.message.has_value());
  EXPECT_NE(r.error.find(needle), std::string::npos) << "error was: " << r.error;
}

TEST(WireProtocol, EmptyAndGarbage) {
  expect_error("", "empty");
  expect_error("\xc1", "malformed");           // 0xc1 is never used
  std::string bye = encode(Bye{"agent", "a long enough reason"});
  expect_error(std::string_view(bye).substr(0, bye.size() - 4), "truncated");
}

TEST(WireProtocol, NotAMap) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, std::vector<int>{1, 2, 3});
  expect_error(std::string_view(buf.data(), buf.size()), "not a MessagePack map (got array)");
  expect_error("\x2a", "not a MessagePack map (got int)");
}

TEST(WireProtocol, MissingType) {
  expect_error(pack_map({{"version", integer(kVersion)}}), "missing field \"type\"");
}

TEST(WireProtocol, RequirePallasMustBeABool) {
  expect_error(pack_map(job_fields_with("require_pallas", integer(1))),
               "field \"require_pallas\" in \"job\" has type int, want bool");
}

TEST(WireProtocol, MissingField) {
  expect_error(pack_map(job_fields_with("job_id", nullptr)),
               "missing field \"job_id\" in \"job\"");
  expect_error(pack_map(job_fields_with("lease", nullptr)),
               "missing field \"lease\" in \"job\"");
}

// The fields of a valid hello frame with `slots` and `stages` as given.
Fields hello_fields(std::function<void(Packer&)> slots, std::function<void(Packer&)> stages) {
  return {{"type", str("hello")},          {"version", integer(kVersion)},
          {"agent_id", str("a")},          {"backend", str("interpret")},
          {"device_kind", str("cpu")},     {"jax_version", str("0.10.2")},
          {"libtpu_version", str("")},     {"slots", std::move(slots)},
          {"stages", std::move(stages)}};
}

auto stage_list(std::vector<std::string> v) {
  return [v](Packer& pk) { pk.pack(v); };
}

TEST(WireProtocol, WrongFieldType) {
  std::string bytes = pack_map(hello_fields(str("two"), stage_list({"lint"})));
  expect_error(bytes, "field \"slots\" in \"hello\" has type str, want int");
  std::string stages = pack_map(hello_fields(integer(1), [](Packer& pk) {
    pk.pack_array(2);
    pk.pack("lint");
    pk.pack(3);
  }));
  expect_error(stages, "field \"stages\" in \"hello\" has element 1 of type int, want str");
  ASSERT_TRUE(decode(pack_map(hello_fields(integer(1), stage_list({"lint"})))).ok());

  std::string seeds = pack_map(job_fields_with("seeds", [](Packer& pk) {
    pk.pack_array(2);
    pk.pack(1);
    pk.pack("two");
  }));
  expect_error(seeds, "field \"seeds\" in \"job\" has element 1 of type str, want int");

  std::string type_int = pack_map({{"type", integer(3)}, {"version", integer(kVersion)}});
  expect_error(type_int, "field \"type\" in \"frame\" has type int, want str");
}

TEST(WireProtocol, OutOfRange) {
  std::string bytes = pack_map(hello_fields(integer(1LL << 40), stage_list({})));
  expect_error(bytes, "\"slots\" in \"hello\" is out of range");
}

TEST(WireProtocol, WrongVersion) {
  std::string v7 = pack_map(
      {{"type", str("heartbeat")}, {"version", integer(7)}, {"agent_id", str("a")}});
  expect_error(v7, "version 7 != 3");
  std::string v1 = pack_map(
      {{"type", str("heartbeat")}, {"version", integer(1)}, {"agent_id", str("a")}});
  expect_error(v1, "version 1 != 3");
  // A version-2 agent knows no re-timing job: it would evaluate the job's empty code.
  std::string v2 = pack_map(
      {{"type", str("heartbeat")}, {"version", integer(2)}, {"agent_id", str("a")}});
  expect_error(v2, "version 2 != 3");
}

TEST(WireProtocol, UnknownType) {
  expect_error(pack_map({{"type", str("foo")}, {"version", integer(kVersion)}}),
               "unknown type \"foo\"");
}

TEST(WireProtocol, TrailingBytes) {
  std::string bytes = encode(Heartbeat{"a"}) + "xyz";
  expect_error(bytes, "3 trailing bytes");
}

TEST(WireProtocol, HugeClaimedSizesDoNotAllocate) {
  expect_error(std::string("\xdd\xff\xff\xff\xff", 5), "malformed");  // array32 of 4G
  expect_error(std::string("\xdf\xff\xff\xff\xff", 5), "malformed");  // map32 of 4G
  expect_error(std::string("\xdb\xff\xff\xff\xff", 5), "malformed");  // str32 of 4G
  std::string deep(1000, '\x91');  // 1000 nested one-element arrays
  deep += '\x01';
  expect_error(deep, "malformed");
}

TEST(WireProtocol, FuzzNeverCrashes) {
  std::mt19937_64 rng(20240601);
  const std::string valid[] = {encode(full_hello()), encode(full_job()),
                               encode(full_result()), encode(Bye{"a", "bye"})};
  int decoded = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string bytes;
    if (i % 2 == 0) {
      // Pure random bytes.
      bytes.resize(rng() % 64);
      for (char& c : bytes) c = static_cast<char>(rng());
    } else {
      // A valid frame with a few bytes flipped, truncated or extended.
      bytes = valid[rng() % 4];
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
      if (rng() % 8 == 0) bytes += static_cast<char>(rng());
    }
    DecodeResult r = decode(bytes);
    EXPECT_EQ(r.ok(), r.error.empty()) << "exactly one of message and error";
    if (r.ok()) ++decoded;
  }
  // Some mutated frames still decode (a flipped byte inside a string, say): fine.
  EXPECT_LT(decoded, 5000);
}

// decode() reads RESULT frames on a fast path; whatever the bytes, it must say exactly what
// the general decoder says: the same message, or the same error.
void expect_same_as_general(const std::string& bytes) {
  DecodeResult fast = decode(bytes);
  DecodeResult general = decode_without_fast_path(bytes);
  ASSERT_EQ(fast.ok(), general.ok()) << fast.error << " / " << general.error;
  EXPECT_EQ(fast.error, general.error);
  if (fast.ok()) {
    ASSERT_EQ(fast.message->index(), general.message->index());
    EXPECT_EQ(encode(*fast.message), encode(*general.message));
  }
}

// A result's fields with randomly chosen (valid or invalid) encodings, in a random order,
// sometimes with a field dropped, repeated, or an unknown or non-str key added.
std::string random_result_frame(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto any_str = [&](std::string s) -> std::function<void(Packer&)> {
    switch (pick(6)) {
      case 0: return [](Packer& pk) { pk.pack_nil(); };
      case 1: return [](Packer& pk) { pk.pack(7); };
      case 2:  // str8 even when short
        return [s](Packer& pk) {
          pk.pack_str(static_cast<uint32_t>(s.size()));
          pk.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
        };
      case 3: return [s](Packer& pk) { pk.pack(s + std::string(40, 'x')); };
      case 4: return [s](Packer& pk) { pk.pack_bin(static_cast<uint32_t>(s.size())); pk.pack_bin_body(s.data(), static_cast<uint32_t>(s.size())); };
      default: return str(s);
    }
  };
  auto any_int = [&]() -> std::function<void(Packer&)> {
    switch (pick(9)) {
      case 0: return [](Packer& pk) { pk.pack(std::numeric_limits<uint64_t>::max()); };
      case 1: return [](Packer& pk) { pk.pack(static_cast<uint64_t>(1) << 63); };
      case 2: return [](Packer& pk) { pk.pack(std::numeric_limits<int64_t>::min()); };
      case 3: return [](Packer& pk) { pk.pack_int8(-5); };
      case 4: return [](Packer& pk) { pk.pack_int32(70000); };
      case 5: return [](Packer& pk) { pk.pack_fix_int16(-300); };
      case 6: return [](Packer& pk) { pk.pack(1.5); };
      case 7: return [](Packer& pk) { pk.pack("1"); };
      default: return integer(static_cast<int64_t>(rng() % 100000));
    }
  };
  auto any_number = [&](bool nil_ok) -> std::function<void(Packer&)> {
    switch (pick(8)) {
      case 0: return [](Packer& pk) { pk.pack_float(0.25f); };
      case 1: return [](Packer& pk) { pk.pack(std::numeric_limits<uint64_t>::max()); };
      case 2: return [](Packer& pk) { pk.pack(-3); };
      case 3: return [](Packer& pk) { pk.pack_nil(); };
      case 4: return [](Packer& pk) { pk.pack(true); };
      case 5: return [](Packer& pk) { pk.pack("x"); };
      default:
        if (nil_ok && pick(2) == 0) return [](Packer& pk) { pk.pack_nil(); };
        return [](Packer& pk) { pk.pack(12.5); };
    }
  };
  auto stage_ms = [&]() -> std::function<void(Packer&)> {
    switch (pick(5)) {
      case 0: return [](Packer& pk) { pk.pack_array(0); };
      case 1:
        return [](Packer& pk) {
          pk.pack_map(2);
          pk.pack("lint");
          pk.pack(1);
          pk.pack("lint");
          pk.pack(2.5);
        };
      case 2:
        return [](Packer& pk) {
          pk.pack_map(1);
          pk.pack(3);
          pk.pack(1.0);
        };
      case 3:
        return [](Packer& pk) {
          pk.pack_map(1);
          pk.pack("numerics");
          pk.pack_nil();
        };
      default:
        return [](Packer& pk) {
          pk.pack_map(2);
          pk.pack("import");
          pk.pack(12.5);
          pk.pack("numerics");
          pk.pack_float(3.0f);
        };
    }
  };
  auto seeds = [&]() -> std::function<void(Packer&)> {
    switch (pick(5)) {
      case 0: return [](Packer& pk) { pk.pack_nil(); };
      case 1:
        return [](Packer& pk) {
          pk.pack_array(2);
          pk.pack(1);
          pk.pack(std::numeric_limits<uint64_t>::max());
        };
      case 2:
        return [](Packer& pk) {
          pk.pack_array(1);
          pk.pack(1.0);
        };
      default:
        return [](Packer& pk) {
          pk.pack_array(3);
          pk.pack(0);
          pk.pack(-1);
          pk.pack(1LL << 40);
        };
    }
  };
  bool mostly_valid = pick(3) != 0;
  auto maybe = [&](std::function<void(Packer&)> valid, std::function<void(Packer&)> other) {
    return mostly_valid && pick(20) != 0 ? valid : other;
  };
  auto valid_number = [&]() -> std::function<void(Packer&)> {
    switch (pick(5)) {
      case 0: return [](Packer& pk) { pk.pack_float(0.25f); };
      case 1: return [](Packer& pk) { pk.pack(std::numeric_limits<uint64_t>::max()); };
      case 2: return [](Packer& pk) { pk.pack(-3); };
      case 3: return [](Packer& pk) { pk.pack_nil(); };
      default: return [](Packer& pk) { pk.pack(12.5); };
    }
  };
  Fields fields = {
      {"type", maybe(str("result"), any_str(pick(2) ? "job" : "result"))},
      {"version", maybe(integer(kVersion), pick(2) ? any_int() : integer(kVersion + 1))},
      {"job_id", maybe(integer(static_cast<int64_t>(rng() % 1000000)), any_int())},
      {"lease", maybe(integer(static_cast<int64_t>(rng() % 1000000)), any_int())},
      {"agent_id", maybe(str("sim7"), any_str("sim7"))},
      {"backend", maybe(str("interpret"), any_str("interpret"))},
      {"verdict", maybe(str("correct"), any_str(pick(2) ? "correct" : "correctish"))},
      {"stage", maybe(pick(4) ? str("done") : nil(), any_str(pick(2) ? "" : "dome"))},
      {"error", maybe(str(""), any_str(""))},
      {"error_signature", maybe(str(""), any_str("sig"))},
      {"stdout", maybe(str("out\n"), any_str("out"))},
      {"stderr", maybe(str(""), any_str("err"))},
      {"stage_ms", maybe([](Packer& pk) { pk.pack_map(0); }, stage_ms())},
      {"max_abs_err", maybe(valid_number(), any_number(true))},
      {"max_rel_err", maybe(valid_number(), any_number(true))},
      {"kernel_ms", maybe(valid_number(), any_number(true))},
      {"baseline_ms", maybe(valid_number(), any_number(true))},
      {"timing_kind", maybe(pick(4) ? str("cpu-wall") : str(""), any_str("cpu-wallish"))},
      {"seeds", maybe([](Packer& pk) { pk.pack_array(1); pk.pack(5); }, seeds())},
      {"outside_pallas_fraction", maybe(valid_number(), any_number(true))},
      {"numerics_path", pick(3) == 0 ? [](Packer& pk) { pk.pack_nil(); } : any_str("tpu")},
      {"timing_runs", maybe(integer(static_cast<int64_t>(rng() % 20)), any_int())},
      {"kernel_ms_low", maybe(valid_number(), any_number(true))},
      {"baseline_ms_high", maybe(valid_number(), any_number(true))},
      {"numerics_ok", maybe(pick(2) ? bool_value(pick(2) == 0) : nil(), any_int())},
      {"structure_ok", maybe(nil(), any_number(true))},
      {"compile_finding", maybe(str("vmem"), any_str("vmem"))},
  };
  if (pick(8) == 0) fields.erase(fields.begin() + pick(static_cast<int>(fields.size())));
  if (pick(8) == 0) fields.push_back(fields[static_cast<size_t>(pick(static_cast<int>(fields.size())))]);
  if (pick(3) == 0)
    fields.emplace_back("future_field", [](Packer& pk) {
      pk.pack_array(2);
      pk.pack_map(1);
      pk.pack("a");
      pk.pack_array(1);
      pk.pack_nil();
      pk.pack_bin(3);
      pk.pack_bin_body("abc", 3);
    });
  if (pick(6) == 0) {
    // An unknown key's value nested 20 deep: fine for the general decoder.
    fields.emplace_back("deep", [](Packer& pk) {
      for (int d = 0; d < 20; ++d) pk.pack_array(1);
      pk.pack(1);
    });
  }
  std::shuffle(fields.begin(), fields.end(), rng);
  std::string bytes = pack_map(fields);
  if (pick(5) == 0) {  // and a non-str key, which decoders ignore
    msgpack::sbuffer buf;
    Packer pk(buf);
    pk.pack_map(static_cast<uint32_t>(fields.size() + 1));
    pk.pack(42);
    pk.pack("ignored");
    bytes = std::string(buf.data(), buf.size()) + bytes.substr(bytes[0] == '\xde' ? 3 : 1);
    if (static_cast<unsigned char>(bytes[0]) < 0x80) bytes.clear();
  }
  return bytes;
}

TEST(WireProtocol, ResultFastPathAgreesWithTheGeneralDecoder) {
  std::mt19937_64 rng(20261202);
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = random_result_frame(rng);
    if (i % 4 == 3 && !bytes.empty()) {  // and a few with bytes flipped, cut or added
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
      if (rng() % 8 == 0) bytes += static_cast<char>(rng());
    }
    expect_same_as_general(bytes);
    if (decode_without_fast_path(bytes).ok()) ++decoded;
  }
  // Both valid and invalid frames were exercised.
  EXPECT_GT(decoded, 1000);
  EXPECT_LT(decoded, 19000);
  expect_same_as_general(encode(full_result()));
  expect_same_as_general(encode(Result{}));
  expect_same_as_general(encode(full_result()) + "x");
}

}  // namespace
}  // namespace palladium::wire
