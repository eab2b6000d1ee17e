#include "protocol/wire_protocol.hpp"

#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <type_traits>
#include <utility>

#include "protocol/field_codec.hpp"
#include "protocol/wire_fields.hpp"

namespace palladium::wire {

namespace {

// Frames are packed straight into the std::string that is sent: no intermediate sbuffer to
// allocate and copy out of, once per frame.
struct StringSink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};
using Packer = msgpack::packer<StringSink>;

template <typename P>
void pack_str(P& pk, std::string_view s) {
  pk.pack_str(static_cast<uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

template <typename P>
void pack_kv(P& pk, std::string_view key, std::string_view value) {
  pack_str(pk, key);
  pack_str(pk, value);
}

template <typename P>
void pack_header(P& pk, std::string_view type, uint32_t fields) {
  pk.pack_map(fields + 2);
  pack_kv(pk, "type", type);
  pack_str(pk, "version");
  pk.pack_int(kVersion);
}

// A job frame is the header, the lease, then the other 10 fields; JobFrame caches the last part.
constexpr uint32_t kJobFields = 11;

void pack_int_list(Packer& pk, std::string_view key, const std::vector<int64_t>& values) {
  pack_str(pk, key);
  pk.pack_array(static_cast<uint32_t>(values.size()));
  for (int64_t v : values) pk.pack_int64(v);
}

template <typename P>
void pack_lease(P& pk, int64_t lease) {
  pack_str(pk, "lease");
  pk.pack_int64(lease);
}

void pack_job_fields(Packer& pk, const Job& m) {
  pack_str(pk, "job_id");
  pk.pack_int64(m.job_id);
  pack_kv(pk, "workload_id", m.workload_id);
  pack_kv(pk, "code", m.code);
  pack_kv(pk, "check_level", m.check_level);
  pack_str(pk, "timeout_s");
  pk.pack_double(m.timeout_s);
  pack_int_list(pk, "seeds", m.seeds);
  pack_str(pk, "require_pallas");
  if (m.require_pallas) pk.pack_true(); else pk.pack_false();
  pack_str(pk, "codes");
  pk.pack_array(static_cast<uint32_t>(m.codes.size()));
  for (const auto& code : m.codes) pack_str(pk, code);
  pack_kv(pk, "compile_tier", m.settings.compile_tier);
  pack_str(pk, "full_shapes");
  if (m.settings.full_shapes) pk.pack_true(); else pk.pack_false();
}

struct Encoder {
  Packer& pk;

  void operator()(const Hello& m) {
    pack_header(pk, "hello", 7);
    pack_kv(pk, "agent_id", m.agent_id);
    pack_kv(pk, "backend", m.backend);
    pack_kv(pk, "device_kind", m.device_kind);
    pack_kv(pk, "jax_version", m.jax_version);
    pack_kv(pk, "libtpu_version", m.libtpu_version);
    pack_str(pk, "slots");
    pk.pack_int(m.slots);
    pack_str(pk, "stages");
    pk.pack_array(static_cast<uint32_t>(m.stages.size()));
    for (const auto& stage : m.stages) pack_str(pk, stage);
  }
  void operator()(const Heartbeat& m) {
    pack_header(pk, "heartbeat", m.interval_ms != 0 ? 2 : 1);
    pack_kv(pk, "agent_id", m.agent_id);
    if (m.interval_ms != 0) {
      pack_str(pk, "interval_ms");
      pk.pack_int(m.interval_ms);
    }
  }
  void operator()(const Job& m) {
    pack_header(pk, "job", kJobFields);
    pack_lease(pk, m.lease);
    pack_job_fields(pk, m);
  }
  void operator()(const Result& m) {
    pack_header(pk, "result", static_cast<uint32_t>(4 + kEvaluationFieldCount));
    pack_str(pk, "job_id");
    pk.pack_int64(m.job_id);
    pack_str(pk, "lease");
    pk.pack_int64(m.lease);
    pack_kv(pk, "agent_id", m.agent_id);
    pack_kv(pk, "backend", m.backend);
    codec::pack_fields(pk, m.evaluation);
  }
  void operator()(const Retimed& m) {
    // The sitting's fields but its job_id (the frame's own).
    pack_header(pk, "retimed",
                static_cast<uint32_t>(4 + judge_pipe::kRetimedFieldCount - 1));
    pack_str(pk, "job_id");
    pk.pack_int64(m.job_id);
    pack_str(pk, "lease");
    pk.pack_int64(m.lease);
    pack_kv(pk, "agent_id", m.agent_id);
    pack_kv(pk, "backend", m.backend);
    visit_fields(m.sitting, [&](const FieldSpec& spec, const auto& value) {
      if (spec.key == std::string_view("job_id")) return;
      pack_str(pk, spec.key);
      codec::pack_value(pk, value);
    });
  }
  void operator()(const Bye& m) {
    pack_header(pk, "bye", 2);
    pack_kv(pk, "agent_id", m.agent_id);
    pack_kv(pk, "reason", m.reason);
  }
};

std::string quote_name(std::string_view s) {
  // Error messages quote peer-supplied names; keep them short and printable.
  std::string out = "\"";
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 64) out += "...";
  out += '"';
  return out;
}

DecodeResult fail(std::string error) {
  DecodeResult r;
  r.error = std::move(error);
  return r;
}

DecodeResult decode_object(const msgpack::object& o) {
  std::string type;
  std::string error = read_envelope(o, &type, kVersion);
  if (!error.empty()) return fail(std::move(error));

  MapReader rd(o, type);
  Message message;
  if (type == "hello") {
    Hello m;
    rd.str("agent_id", &m.agent_id);
    rd.str("backend", &m.backend);
    rd.str("device_kind", &m.device_kind);
    rd.str("jax_version", &m.jax_version);
    rd.str("libtpu_version", &m.libtpu_version);
    rd.int32("slots", &m.slots);
    rd.str_list("stages", &m.stages);
    message = std::move(m);
  } else if (type == "heartbeat") {
    Heartbeat m;
    rd.str("agent_id", &m.agent_id);
    rd.opt_int32("interval_ms", &m.interval_ms);
    message = std::move(m);
  } else if (type == "job") {
    Job m;
    rd.int64("lease", &m.lease);
    rd.int64("job_id", &m.job_id);
    rd.str("workload_id", &m.workload_id);
    rd.str("code", &m.code);
    rd.str("check_level", &m.check_level);
    rd.number("timeout_s", &m.timeout_s);
    rd.int_list("seeds", &m.seeds);
    rd.opt_bool("require_pallas", &m.require_pallas);
    if (rd.has("codes")) rd.str_list("codes", &m.codes);
    rd.opt_str("compile_tier", &m.settings.compile_tier);
    rd.opt_bool("full_shapes", &m.settings.full_shapes);
    message = std::move(m);
  } else if (type == "result") {
    Result m;
    rd.int64("job_id", &m.job_id);
    rd.int64("lease", &m.lease);
    rd.str("agent_id", &m.agent_id);
    rd.str("backend", &m.backend);
    codec::read_fields(rd, &m.evaluation);
    message = std::move(m);
  } else if (type == "retimed") {
    Retimed m;
    rd.int64("job_id", &m.job_id);
    rd.int64("lease", &m.lease);
    rd.str("agent_id", &m.agent_id);
    rd.str("backend", &m.backend);
    codec::read_fields(rd, &m.sitting);  // reads the frame's job_id into the sitting's too
    message = std::move(m);
  } else if (type == "bye") {
    Bye m;
    rd.str("agent_id", &m.agent_id);
    rd.str("reason", &m.reason);
    message = std::move(m);
  } else {
    return fail("unknown type " + quote_name(type));
  }
  if (!rd.ok()) return fail(rd.error());
  DecodeResult r;
  r.message = std::move(message);
  return r;
}

}  // namespace

// -- field helpers (wire_fields.hpp) -----------------------------------------------------

std::string_view object_kind(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "bool";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER: return "int";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "float";
    case msgpack::type::STR: return "str";
    case msgpack::type::BIN: return "bin";
    case msgpack::type::ARRAY: return "array";
    case msgpack::type::MAP: return "map";
    case msgpack::type::EXT: return "ext";
  }
  return "unknown";
}

MapReader::MapReader(const msgpack::object& map, std::string frame_type)
    : map_(map), frame_type_(std::move(frame_type)) {}

const msgpack::object* MapReader::find(std::string_view key, bool required) {
  if (!ok() || map_.type != msgpack::type::MAP) {
    if (ok()) error_ = "frame " + quote_name(frame_type_) + " is not a map";
    return nullptr;
  }
  const msgpack::object_map& m = map_.via.map;
  for (uint32_t i = 0; i < m.size; ++i) {
    const msgpack::object& k = m.ptr[i].key;
    if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == key) {
      return &m.ptr[i].val;
    }
  }
  if (required) {
    error_ = "missing field " + quote_name(key) + " in " + quote_name(frame_type_);
  }
  return nullptr;
}

void MapReader::fail_type(std::string_view key, const msgpack::object& value,
                          std::string_view want) {
  error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " has type " +
           std::string(object_kind(value)) + ", want " + std::string(want);
}

namespace {

bool as_int64(const msgpack::object& o, int64_t* out) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(o.via.u64);
    return true;
  }
  if (o.type == msgpack::type::NEGATIVE_INTEGER) {
    *out = o.via.i64;
    return true;
  }
  return false;
}

bool as_number(const msgpack::object& o, double* out) {
  switch (o.type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: *out = o.via.f64; return true;
    case msgpack::type::POSITIVE_INTEGER: *out = static_cast<double>(o.via.u64); return true;
    case msgpack::type::NEGATIVE_INTEGER: *out = static_cast<double>(o.via.i64); return true;
    default: return false;
  }
}

}  // namespace

bool MapReader::has(std::string_view key) { return find(key, false) != nullptr; }

bool MapReader::is_nil(std::string_view key) {
  const msgpack::object* v = find(key, false);
  return v != nullptr && v->type == msgpack::type::NIL;
}

void MapReader::str(std::string_view key, std::string* out) {
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (v->type != msgpack::type::STR) return fail_type(key, *v, "str");
  out->assign(v->via.str.ptr, v->via.str.size);
}

void MapReader::int64(std::string_view key, int64_t* out) {
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (!as_int64(*v, out)) {
    if (v->type == msgpack::type::POSITIVE_INTEGER) {
      error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " is out of range";
      return;
    }
    fail_type(key, *v, "int");
  }
}

void MapReader::int32(std::string_view key, int* out) {
  int64_t wide = 0;
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (!as_int64(*v, &wide)) {
    if (v->type == msgpack::type::POSITIVE_INTEGER) {
      error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " is out of range";
      return;
    }
    return fail_type(key, *v, "int");
  }
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " is out of range";
    return;
  }
  *out = static_cast<int>(wide);
}

void MapReader::number(std::string_view key, double* out) {
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (!as_number(*v, out)) fail_type(key, *v, "float");
}

void MapReader::opt_number(std::string_view key, std::optional<double>* out) {
  out->reset();
  const msgpack::object* v = find(key, false);
  if (v == nullptr || v->type == msgpack::type::NIL) return;
  double d = 0.0;
  if (!as_number(*v, &d)) return fail_type(key, *v, "float or nil");
  *out = d;
}

void MapReader::opt_str(std::string_view key, std::string* out) {
  const msgpack::object* v = find(key, false);
  if (v == nullptr || v->type == msgpack::type::NIL) return;
  str(key, out);
}

void MapReader::opt_int_list(std::string_view key, std::vector<int64_t>* out) {
  if (find(key, false) == nullptr) return;
  int_list(key, out);
}

void MapReader::opt_bool(std::string_view key, bool* out) {
  const msgpack::object* v = find(key, false);
  if (v == nullptr) return;
  if (v->type != msgpack::type::BOOLEAN) return fail_type(key, *v, "bool");
  *out = v->via.boolean;
}

template <typename T, typename Element>
void MapReader::list(std::string_view key, std::vector<T>* out, std::string_view want,
                     Element element) {
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (v->type != msgpack::type::ARRAY) return fail_type(key, *v, "array of " + std::string(want));
  out->clear();
  for (uint32_t i = 0; i < v->via.array.size; ++i) {
    const msgpack::object& e = v->via.array.ptr[i];
    T x{};
    if (!element(e, &x)) {
      error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " has element " +
               std::to_string(i) + " of type " + std::string(object_kind(e)) + ", want " +
               std::string(want);
      return;
    }
    out->push_back(std::move(x));
  }
}

void MapReader::int_list(std::string_view key, std::vector<int64_t>* out) {
  list(key, out, "int", [](const msgpack::object& e, int64_t* x) { return as_int64(e, x); });
}

void MapReader::opt_int32(std::string_view key, int* out) {
  if (find(key, false) == nullptr) return;
  int32(key, out);
}

void MapReader::str_list(std::string_view key, std::vector<std::string>* out) {
  list(key, out, "str", [](const msgpack::object& e, std::string* x) {
    if (e.type != msgpack::type::STR) return false;
    x->assign(e.via.str.ptr, e.via.str.size);
    return true;
  });
}

void MapReader::number_list(std::string_view key, std::vector<double>* out) {
  list(key, out, "float", [](const msgpack::object& e, double* x) { return as_number(e, x); });
}

void MapReader::opt_bool_or_nil(std::string_view key, std::optional<bool>* out) {
  out->reset();
  const msgpack::object* v = find(key, false);
  if (v == nullptr || v->type == msgpack::type::NIL) return;
  if (v->type != msgpack::type::BOOLEAN) return fail_type(key, *v, "bool or nil");
  *out = v->via.boolean;
}

void MapReader::require(std::string_view key) { find(key, true); }

void MapReader::unknown_value(std::string_view key, std::string_view value, std::string_view want) {
  if (!ok()) return;
  error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) + " has unknown value " +
           quote_name(value) + ", want " + std::string(want);
}

void MapReader::number_map(std::string_view key, std::map<std::string, double>* out) {
  const msgpack::object* v = find(key, true);
  if (v == nullptr) return;
  if (v->type != msgpack::type::MAP) return fail_type(key, *v, "map of str to float");
  out->clear();
  for (uint32_t i = 0; i < v->via.map.size; ++i) {
    const msgpack::object_kv& kv = v->via.map.ptr[i];
    double d = 0.0;
    if (kv.key.type != msgpack::type::STR || !as_number(kv.val, &d)) {
      error_ = "field " + quote_name(key) + " in " + quote_name(frame_type_) +
               " must map str to float (entry " + std::to_string(i) + " is " +
               std::string(object_kind(kv.key)) + " -> " + std::string(object_kind(kv.val)) +
               ")";
      return;
    }
    (*out)[std::string(kv.key.via.str.ptr, kv.key.via.str.size)] = d;
  }
}

std::string read_envelope(const msgpack::object& o, std::string* type, int want_version) {
  if (o.type != msgpack::type::MAP) {
    return "not a MessagePack map (got " + std::string(object_kind(o)) + ")";
  }
  MapReader rd(o, "frame");
  rd.str("type", type);
  int64_t version = 0;
  rd.int64("version", &version);
  if (!rd.ok()) return rd.error();
  if (version != want_version) {
    return "version " + std::to_string(version) + " != " + std::to_string(want_version) +
           " in " + quote_name(*type);
  }
  return "";
}

msgpack::unpack_limit limits_for(std::size_t size) {
  // Every element takes at least one byte, every map pair two.
  const std::size_t n = size + 1;
  return msgpack::unpack_limit(n, n / 2 + 1, n, n, n, /*depth=*/32);
}

// -- public API --------------------------------------------------------------------------

std::string_view type_name(const Message& message) {
  static constexpr std::string_view kNames[] = {"hello", "heartbeat", "job", "result", "bye",
                                                "retimed"};
  return kNames[message.index()];
}

std::string encode(const Message& message) {
  std::string out;
  StringSink sink{out};
  Packer pk(sink);
  std::visit(Encoder{pk}, message);
  return out;
}

JobFrame::JobFrame(const Job& job) : JobFrame(job, std::string()) {}

JobFrame::JobFrame(const Job& job, std::string storage)
    : buffer_(std::make_shared<std::string>(std::move(storage))) {
  std::string& out = *buffer_;
  out.clear();
  out.reserve(kRoom + job.code.size() + job.workload_id.size() + 128);
  out.resize(kRoom);
  StringSink sink{out};
  Packer pk(sink);
  pack_job_fields(pk, job);
}

std::string JobFrame::with_lease(int64_t lease) const {
  std::string out;
  out.reserve(64 + size());
  StringSink sink{out};
  Packer pk(sink);
  pack_header(pk, "job", kJobFields);
  pack_lease(pk, lease);
  out.append(*buffer_, kRoom, std::string::npos);
  return out;
}

JobFrame::Shared JobFrame::share_with_lease(int64_t lease) {
  // The header and lease, packed on the stack (no allocation per dispatch).
  struct ArraySink {
    char bytes[64];
    std::size_t size = 0;
    void write(const char* data, std::size_t n) {
      if (size + n <= sizeof bytes) std::memcpy(bytes + size, data, n);
      size += n;
    }
  } head;
  msgpack::packer<ArraySink> pk(head);
  pack_header(pk, "job", kJobFields);
  pack_lease(pk, lease);
  if (head.size > kRoom) {  // cannot happen (kRoom covers the longest); stay correct anyway
    auto whole = std::make_shared<const std::string>(with_lease(lease));
    return Shared{whole, 0, whole->size()};
  }
  // Bytes handed out before may still be read by the sender: never write over them.
  if (handed_out_) buffer_ = std::make_shared<std::string>(*buffer_);
  handed_out_ = true;
  std::size_t offset = kRoom - head.size;
  std::memcpy(buffer_->data() + offset, head.bytes, head.size);
  return Shared{buffer_, offset, buffer_->size() - offset};
}

std::string JobFrame::take_storage() {
  if (!buffer_ || buffer_.use_count() != 1) return std::string();
  // use_count() reads relaxed; this fence pairs with the release of the last other share
  // (ZeroMQ's thread, done reading the bytes), so writing them again cannot race its reads.
  std::atomic_thread_fence(std::memory_order_acquire);
  std::string storage = std::move(*buffer_);
  buffer_.reset();
  return storage;
}

namespace {

// Strings and binaries point into the frame instead of being copied into the zone:
// decode_object() copies what it keeps before decode() returns.
bool reference_frame(msgpack::type::object_type, std::size_t, void*) { return true; }

// One zone per thread, emptied after every frame: a frame's objects no longer cost a zone
// (and its first 8 KiB chunk) allocated and freed per frame.
struct ZoneGuard {
  msgpack::zone& zone;
  ~ZoneGuard() { zone.clear(); }
};


// -- the RESULT fast path --------------------------------------------------------------
//
// RESULT frames are the coordinator's hot inbound type (one per candidate). Building a
// msgpack::object tree in a zone and then finding each of ~20 keys by a linear scan of it
// showed in perf; this reads a RESULT in one pass over the bytes instead. It only ever
// accepts: anything it does not handle exactly like the general decoder below (another type,
// a duplicate or missing key, a wrong type, an out-of-range int, deep nesting, bad or
// trailing bytes) makes it give up, and the general decoder decodes the frame, so every rule
// and every error message stays the general decoder's.
class FastReader {
 public:
  explicit FastReader(std::string_view bytes)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  bool at_end() const { return p_ == end_; }

  // A map header; false if the next object is not a map (or is truncated).
  bool map_header(uint32_t* n) { return container_header(0x80, 0xde, 0xdf, n); }

  // An array header; false if the next object is not an array (or is truncated).
  bool array_header(uint32_t* n) { return container_header(0x90, 0xdc, 0xdd, n); }

  // A str's bytes; false if the next object is not a str.
  bool str(std::string_view* out) {
    if (p_ == end_) return false;
    uint8_t b = *p_;
    uint32_t n = 0;
    if ((b & 0xe0) == 0xa0) {
      ++p_;
      n = b & 0x1f;
    } else if (b == 0xd9 || b == 0xda || b == 0xdb) {
      ++p_;
      if (!be(b == 0xd9 ? 1 : b == 0xda ? 2 : 4, &n)) return false;
    } else {
      return false;
    }
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

  bool is_str() const { return p_ != end_ && ((*p_ & 0xe0) == 0xa0 || (*p_ >= 0xd9 && *p_ <= 0xdb)); }
  bool is_nil() const { return p_ != end_ && *p_ == 0xc0; }
  bool boolean(bool* out) {
    if (p_ == end_ || (*p_ != 0xc2 && *p_ != 0xc3)) return false;
    *out = *p_++ == 0xc3;
    return true;
  }
  void skip_nil() { ++p_; }

  // An int that fits int64_t (as MapReader::int64 accepts it).
  bool int64(int64_t* out) {
    if (p_ == end_) return false;
    uint8_t b = *p_;
    if (b <= 0x7f) return ++p_, *out = b, true;
    if (b >= 0xe0) return ++p_, *out = static_cast<int8_t>(b), true;
    uint64_t u = 0;
    switch (b) {
      case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        ++p_;
        if (!be64(std::size_t{1} << (b - 0xcc), &u)) return false;
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
        *out = static_cast<int64_t>(u);
        return true;
      }
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        std::size_t width = std::size_t{1} << (b - 0xd0);
        ++p_;
        if (!be64(width, &u)) return false;
        // Sign-extend from the encoded width.
        if (width < 8 && (u >> (8 * width - 1)) != 0) u |= ~uint64_t{0} << (8 * width);
        *out = static_cast<int64_t>(u);
        return true;
      }
      default: return false;
    }
  }

  // A float or int, as a double (as MapReader::number converts them).
  bool number(double* out) {
    if (p_ == end_) return false;
    uint8_t b = *p_;
    uint64_t u = 0;
    if (b == 0xca) {
      ++p_;
      if (!be64(4, &u)) return false;
      uint32_t bits = static_cast<uint32_t>(u);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      *out = static_cast<double>(f);
      return true;
    }
    if (b == 0xcb) {
      ++p_;
      if (!be64(8, &u)) return false;
      std::memcpy(out, &u, sizeof *out);
      return true;
    }
    if (b == 0xcf) {  // uint64: msgpack-c reads it as an unsigned value, whatever its size
      ++p_;
      if (!be64(8, &u)) return false;
      *out = static_cast<double>(u);
      return true;
    }
    int64_t i = 0;
    if (!int64(&i)) return false;
    *out = static_cast<double>(i);
    return true;
  }

  // Skips one object of any kind, nested at most `depth` deep; false if it cannot.
  bool skip(int depth) {
    if (p_ == end_ || depth <= 0) return false;
    uint8_t b = *p_;
    uint32_t n = 0;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) return ++p_, true;
    if ((b & 0xf0) == 0x80) return ++p_, skip_items(2 * static_cast<uint64_t>(b & 0x0f), depth);
    if ((b & 0xf0) == 0x90) return ++p_, skip_items(b & 0x0f, depth);
    if ((b & 0xe0) == 0xa0) return ++p_, skip_bytes(b & 0x1f);
    switch (b) {
      case 0xcc: case 0xd0: return ++p_, skip_bytes(1);
      case 0xcd: case 0xd1: return ++p_, skip_bytes(2);
      case 0xca: case 0xce: case 0xd2: return ++p_, skip_bytes(4);
      case 0xcb: case 0xcf: case 0xd3: return ++p_, skip_bytes(8);
      case 0xd9: case 0xc4: return ++p_, be(1, &n) && skip_bytes(n);
      case 0xda: case 0xc5: return ++p_, be(2, &n) && skip_bytes(n);
      case 0xdb: case 0xc6: return ++p_, be(4, &n) && skip_bytes(n);
      case 0xdc: return ++p_, be(2, &n) && skip_items(n, depth);
      case 0xdd: return ++p_, be(4, &n) && skip_items(n, depth);
      case 0xde: return ++p_, be(2, &n) && skip_items(2 * static_cast<uint64_t>(n), depth);
      case 0xdf: return ++p_, be(4, &n) && skip_items(2 * static_cast<uint64_t>(n), depth);
      default: return false;  // ext and the unused 0xc1: left to the general decoder
    }
  }

 private:
  // A MessagePack container header: the fix form (`fix` in the high nibble, the count in the low
  // one), or the 16- or 32-bit count after `tag16` / `tag32`.
  bool container_header(uint8_t fix, uint8_t tag16, uint8_t tag32, uint32_t* n) {
    if (p_ == end_) return false;
    uint8_t b = *p_;
    if ((b & 0xf0) == fix) {
      ++p_;
      *n = b & 0x0f;
      return true;
    }
    if (b == tag16) return ++p_, be(2, n);
    if (b == tag32) return ++p_, be(4, n);
    return false;
  }

  bool be(std::size_t width, uint32_t* out) {
    uint64_t u = 0;
    if (!be64(width, &u)) return false;
    *out = static_cast<uint32_t>(u);
    return true;
  }
  bool be64(std::size_t width, uint64_t* out) {
    if (static_cast<std::size_t>(end_ - p_) < width) return false;
    uint64_t u = 0;
    for (std::size_t i = 0; i < width; ++i) u = (u << 8) | p_[i];
    p_ += width;
    *out = u;
    return true;
  }
  bool skip_bytes(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  bool skip_items(uint64_t n, int depth) {
    // Each item takes at least a byte: a claimed count beyond the bytes left is garbage.
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    for (uint64_t i = 0; i < n; ++i)
      if (!skip(depth - 1)) return false;
    return true;
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

// The keys of a RESULT frame, one bit each: the frame's own (type, version, job_id, lease,
// agent_id, backend), then the evaluation's in visit_fields() order. A key seen twice (the
// general decoder takes the first) or a required one missing sends the frame to the general
// decoder.
constexpr std::size_t kFrameKeys = 6;
static_assert(kFrameKeys + kEvaluationFieldCount <= 64, "a RESULT key needs a bit of its own");

struct ResultKeys {
  std::vector<std::string_view> names;  // index = bit
  uint64_t required = 0;
};

const ResultKeys& result_keys() {
  static const ResultKeys keys = [] {
    ResultKeys k;
    k.names = {"type", "version", "job_id", "lease", "agent_id", "backend"};
    k.required = (uint64_t{1} << kFrameKeys) - 1;
    Evaluation none;
    visit_fields(none, [&](const FieldSpec& spec, const auto&) {
      if (spec.required) k.required |= uint64_t{1} << k.names.size();
      k.names.push_back(spec.key);
    });
    return k;
  }();
  return keys;
}

// The bit of `key`, or -1 for a key a RESULT does not have.
int result_key(std::string_view key) {
  const auto& names = result_keys().names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == key) return static_cast<int>(i);
  return -1;
}

// Nesting the general decoder would accept inside an unknown key's value, bounded well below
// its own limit (limits_for: 32); deeper frames go to it.
constexpr int kFastSkipDepth = 8;

// One value of each type the evaluation has, read as codec::read_value reads it; false for
// anything else (the general decoder then decides, and words the error).
// No evaluation field is an int64 today; kept so that adding one needs no new reader.
[[maybe_unused]] bool fast_value(FastReader& rd, const FieldSpec&, int64_t* out) { return rd.int64(out); }
bool fast_value(FastReader& rd, const FieldSpec&, int* out) {
  int64_t wide = 0;
  if (!rd.int64(&wide) || wide < std::numeric_limits<int>::min() ||
      wide > std::numeric_limits<int>::max())
    return false;
  *out = static_cast<int>(wide);
  return true;
}
bool fast_value(FastReader& rd, const FieldSpec&, std::string* out) {
  std::string_view s;
  return rd.str(&s) && (out->assign(s), true);
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<std::string>* out) {
  if (rd.is_nil()) return rd.skip_nil(), out->reset(), true;
  std::string_view s;
  return rd.str(&s) && (*out = std::string(s), true);
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<double>* out) {
  if (rd.is_nil()) return rd.skip_nil(), out->reset(), true;
  double d = 0;
  if (!rd.number(&d)) return false;
  *out = d;
  return true;
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<bool>* out) {
  if (rd.is_nil()) return rd.skip_nil(), out->reset(), true;
  bool b = false;
  if (!rd.boolean(&b)) return false;
  *out = b;
  return true;
}
bool fast_value(FastReader& rd, const FieldSpec&, std::map<std::string, double>* out) {
  uint32_t n = 0;
  if (!rd.map_header(&n)) return false;
  out->clear();
  for (uint32_t j = 0; j < n; ++j) {
    std::string_view s;
    double ms = 0;
    if (!rd.str(&s) || !rd.number(&ms)) return false;
    (*out)[std::string(s)] = ms;  // a repeated stage: the last one wins
  }
  return true;
}
bool fast_value(FastReader& rd, const FieldSpec&, std::vector<int64_t>* out) {
  uint32_t n = 0;
  if (!rd.array_header(&n)) return false;
  out->clear();
  for (uint32_t j = 0; j < n; ++j) {
    int64_t x = 0;
    if (!rd.int64(&x)) return false;
    out->push_back(x);
  }
  return true;
}
bool fast_value(FastReader& rd, const FieldSpec&, Verdict* out) {
  std::string_view s;
  if (!rd.str(&s)) return false;
  auto v = verdict_from_string(s);
  return v && (*out = *v, true);
}
template <typename E, typename Parse>
bool fast_enum(FastReader& rd, std::optional<E>* out, Parse parse) {
  out->reset();
  if (rd.is_nil()) return rd.skip_nil(), true;
  std::string_view s;
  if (!rd.str(&s)) return false;
  if (s.empty()) return true;
  auto v = parse(s);
  return v && (*out = *v, true);
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<Stage>* out) {
  return fast_enum(rd, out, stage_from_string);
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<TimingKind>* out) {
  return fast_enum(rd, out, timing_kind_from_string);
}
bool fast_value(FastReader& rd, const FieldSpec&, std::optional<NumericsPath>* out) {
  return fast_enum(rd, out, numerics_path_from_string);
}

// Reads the value of the evaluation's field number `index` (visit_fields() order).
bool fast_evaluation_field(FastReader& rd, std::size_t index, Evaluation* out) {
  std::size_t i = 0;
  bool ok = false;
  visit_fields(*out, [&](const FieldSpec& spec, auto& value) {
    if (i++ != index) return;
    if (!spec.required && rd.is_nil()) {
      rd.skip_nil();  // an optional key's nil: the field keeps its default (codec::read_value)
      ok = true;
    } else {
      ok = fast_value(rd, spec, &value);
    }
  });
  return ok;
}

// Decodes `bytes` if it is a well-formed RESULT frame the general decoder would accept;
// returns false (leaving *out partly written) otherwise.
bool fast_result(std::string_view bytes, Result* out) {
  FastReader rd(bytes);
  uint32_t pairs = 0;
  if (!rd.map_header(&pairs)) return false;
  uint64_t seen = 0;
  for (uint32_t i = 0; i < pairs; ++i) {
    std::string_view key;
    if (!rd.is_str()) {
      // The general decoder ignores non-str keys.
      if (!rd.skip(kFastSkipDepth) || !rd.skip(kFastSkipDepth)) return false;
      continue;
    }
    if (!rd.str(&key)) return false;
    int k = result_key(key);
    if (k < 0) {
      if (!rd.skip(kFastSkipDepth)) return false;
      continue;
    }
    const uint64_t bit = uint64_t{1} << k;
    if (seen & bit) return false;
    seen |= bit;
    std::string_view s;
    bool ok = true;
    switch (k) {
      case 0: ok = rd.str(&s) && s == "result"; break;
      case 1: {
        int64_t v = 0;
        ok = rd.int64(&v) && v == kVersion;
        break;
      }
      case 2: ok = rd.int64(&out->job_id); break;
      case 3: ok = rd.int64(&out->lease); break;
      case 4: ok = rd.str(&s) && (out->agent_id.assign(s), true); break;
      case 5: ok = rd.str(&s) && (out->backend.assign(s), true); break;
      default:
        ok = fast_evaluation_field(rd, static_cast<std::size_t>(k) - kFrameKeys, &out->evaluation);
    }
    if (!ok) return false;
  }
  const uint64_t required = result_keys().required;
  return rd.at_end() && (seen & required) == required;
}

DecodeResult decode_general(std::string_view bytes);

}  // namespace

DecodeResult decode(std::string_view bytes) {
  Result result;
  if (fast_result(bytes, &result)) {
    DecodeResult r;
    r.message.emplace(std::in_place_type<Result>, std::move(result));
    return r;
  }
  return decode_general(bytes);
}

DecodeResult decode_without_fast_path(std::string_view bytes) { return decode_general(bytes); }

namespace {

DecodeResult decode_general(std::string_view bytes) {
  if (bytes.empty()) return fail("empty frame");
  thread_local msgpack::zone zone;
  try {
    ZoneGuard guard{zone};
    std::size_t offset = 0;
    msgpack::object object =
        msgpack::unpack(zone, bytes.data(), bytes.size(), offset, reference_frame, nullptr,
                        limits_for(bytes.size()));
    DecodeResult r = decode_object(object);
    if (r.ok() && offset != bytes.size()) {
      return fail(std::to_string(bytes.size() - offset) + " trailing bytes after the map");
    }
    return r;
  } catch (const msgpack::insufficient_bytes&) {
    return fail("malformed MessagePack: truncated (" + std::to_string(bytes.size()) +
                " bytes)");
  } catch (const std::exception& e) {
    return fail(std::string("malformed MessagePack: ") + e.what());
  } catch (...) {
    return fail("malformed MessagePack: unknown error");
  }
}

}  // namespace

}  // namespace palladium::wire
