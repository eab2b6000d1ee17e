// MessagePack packing and reading of one field of each type protocol/judge_pipe.json knows, and
// of a whole record over its generated visit_fields(): the one codec of the evaluation record
// (the wire's result frame and the judge pipe) and of every judge pipe message. Part of
// palladium_wire.

#ifndef PALLADIUM_PROTOCOL_FIELD_CODEC_HPP_
#define PALLADIUM_PROTOCOL_FIELD_CODEC_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <msgpack.hpp>

#include "protocol/judge_pipe.hpp"
#include "protocol/wire_fields.hpp"

namespace palladium::codec {

template <typename P>
void pack_str(P& pk, std::string_view s) {
  pk.pack_str(static_cast<uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

template <typename P> void pack_value(P& pk, int64_t v) { pk.pack_int64(v); }
template <typename P> void pack_value(P& pk, int v) { pk.pack_int(v); }
template <typename P> void pack_value(P& pk, double v) { pk.pack_double(v); }
template <typename P> void pack_value(P& pk, bool v) { v ? pk.pack_true() : pk.pack_false(); }
template <typename P> void pack_value(P& pk, const std::string& v) { codec::pack_str(pk, v); }
template <typename P> void pack_value(P& pk, Verdict v) { codec::pack_str(pk, to_string(v)); }
template <typename P> void pack_value(P& pk, Stage v) { codec::pack_str(pk, to_string(v)); }
template <typename P> void pack_value(P& pk, TimingKind v) { codec::pack_str(pk, to_string(v)); }
template <typename P> void pack_value(P& pk, NumericsPath v) { codec::pack_str(pk, to_string(v)); }
template <typename P>
void pack_value(P& pk, const std::vector<int64_t>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (int64_t x : v) pk.pack_int64(x);
}
template <typename P>
void pack_value(P& pk, const std::vector<double>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (double x : v) pk.pack_double(x);
}
template <typename P>
void pack_value(P& pk, const std::vector<std::string>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (const auto& x : v) codec::pack_str(pk, x);
}
template <typename P>
void pack_value(P& pk, const std::map<std::string, double>& v) {
  pk.pack_map(static_cast<uint32_t>(v.size()));
  for (const auto& [key, value] : v) {
    codec::pack_str(pk, key);
    pk.pack_double(value);
  }
}
// An absent optional is nil: every ?-type reads nil as absent.
template <typename P, typename T>
void pack_value(P& pk, const std::optional<T>& v) {
  if (v)
    pack_value(pk, *v);
  else
    pk.pack_nil();
}

// Packs every field of `record` as key/value pairs (the caller packs the map header:
// k<Record>FieldCount pairs).
template <typename P, typename R>
void pack_fields(P& pk, const R& record) {
  visit_fields(record, [&](const FieldSpec& spec, const auto& value) {
    codec::pack_str(pk, spec.key);
    pack_value(pk, value);
  });
}

// The number of keys pack_fields() packs for `record`.
template <typename R>
std::size_t visit_count(const R& record) {
  std::size_t n = 0;
  visit_fields(record, [&](const FieldSpec&, const auto&) { ++n; });
  return n;
}

// A whole judge pipe message: the map with "type", "version" and its fields.
template <typename P, typename M>
void pack_message(P& pk, const M& message, int version = kJudgePipeVersion) {
  pk.pack_map(static_cast<uint32_t>(2 + visit_count(message)));
  codec::pack_str(pk, "type");
  codec::pack_str(pk, M::kType);
  codec::pack_str(pk, "version");
  pk.pack_int(version);
  pack_fields(pk, message);
}

// Reads one field: a missing optional key, or one that is nil, leaves *out as it is (its
// default); a missing required one, a wrong type or an unknown enum spelling is the reader's
// error, naming the key. A required ?-type may be nil (absent).
void read_value(wire::MapReader& rd, const FieldSpec& spec, int64_t* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, int* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, double* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, bool* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::string* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<int64_t>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<double>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<std::string>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::map<std::string, double>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<double>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<bool>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<std::string>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, Verdict* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<Stage>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<TimingKind>* out);
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<NumericsPath>* out);

template <typename R>
void read_fields(wire::MapReader& rd, R* record) {
  visit_fields(*record, [&](const FieldSpec& spec, auto& value) { read_value(rd, spec, &value); });
}

}  // namespace palladium::codec

#endif  // PALLADIUM_PROTOCOL_FIELD_CODEC_HPP_
