#include "protocol/field_codec.hpp"

namespace palladium::codec {

namespace {

// True when the key is there to be read; a missing required key becomes the reader's error.
bool present(wire::MapReader& rd, const FieldSpec& spec) {
  if (rd.has(spec.key)) return true;
  if (spec.required) rd.require(spec.key);
  return false;
}

// True when the key holds a value to read: an optional key's nil means "not said", like a
// missing one (the judge sends None for a fact nothing decided), so the default stays.
bool given(wire::MapReader& rd, const FieldSpec& spec) {
  if (!present(rd, spec)) return false;
  return spec.required || !rd.is_nil(spec.key);
}

// A ?-enum: nil, missing and "" read as absent; another spelling must be one of `parse`'s.
template <typename E, typename Parse>
void read_enum(wire::MapReader& rd, const FieldSpec& spec, std::optional<E>* out, Parse parse,
               std::string_view want) {
  out->reset();
  if (!present(rd, spec)) return;
  std::string text;
  rd.opt_str(spec.key, &text);
  if (!rd.ok() || text.empty()) return;
  if (auto value = parse(text))
    *out = *value;
  else
    rd.unknown_value(spec.key, text, want);
}

}  // namespace

void read_value(wire::MapReader& rd, const FieldSpec& spec, int64_t* out) {
  if (given(rd, spec)) rd.int64(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, int* out) {
  if (given(rd, spec)) rd.int32(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, double* out) {
  if (given(rd, spec)) rd.number(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, bool* out) {
  if (given(rd, spec)) rd.opt_bool(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::string* out) {
  if (given(rd, spec)) rd.str(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<std::string>* out) {
  out->reset();
  if (!present(rd, spec) || rd.is_nil(spec.key)) return;
  std::string text;
  rd.str(spec.key, &text);
  if (rd.ok()) *out = std::move(text);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<int64_t>* out) {
  if (given(rd, spec)) rd.int_list(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<double>* out) {
  if (given(rd, spec)) rd.number_list(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::vector<std::string>* out) {
  if (given(rd, spec)) rd.str_list(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::map<std::string, double>* out) {
  if (given(rd, spec)) rd.number_map(spec.key, out);
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<double>* out) {
  if (present(rd, spec))
    rd.opt_number(spec.key, out);
  else
    out->reset();
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<bool>* out) {
  if (present(rd, spec))
    rd.opt_bool_or_nil(spec.key, out);
  else
    out->reset();
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, Verdict* out) {
  if (!present(rd, spec)) return;
  std::string text;
  rd.str(spec.key, &text);
  if (!rd.ok()) return;
  if (auto v = verdict_from_string(text))
    *out = *v;
  else
    rd.unknown_value(spec.key, text, "a verdict of protocol/taxonomy.json");
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<Stage>* out) {
  read_enum(rd, spec, out, stage_from_string, "a stage of protocol/taxonomy.json or nil");
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<TimingKind>* out) {
  read_enum(rd, spec, out, timing_kind_from_string,
            "a timing kind of protocol/taxonomy.json or nil");
}
void read_value(wire::MapReader& rd, const FieldSpec& spec, std::optional<NumericsPath>* out) {
  read_enum(rd, spec, out, numerics_path_from_string,
            "a numerics path of protocol/taxonomy.json or nil");
}

}  // namespace palladium::codec
