// Field-level MessagePack helpers shared by the wire protocol (protocol/wire_protocol.cpp) and
// the field codec of the evaluation and the judge pipe (protocol/field_codec.hpp). Part of palladium_wire; not a
// public API of the coordinator.

#ifndef PALLADIUM_PROTOCOL_WIRE_FIELDS_HPP_
#define PALLADIUM_PROTOCOL_WIRE_FIELDS_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <msgpack.hpp>

#include "protocol/wire_protocol.hpp"

namespace palladium::wire {

// The MessagePack kind of `o` as used in error messages: "nil", "bool", "int", "float",
// "str", "bin", "array", "map", "ext".
std::string_view object_kind(const msgpack::object& o);

// Reads typed fields out of one MessagePack map. The first failure is remembered (later
// reads are no-ops) and reported by error(), naming the field and the frame type.
// Holds a reference to `map`, which must outlive the reader.
class MapReader {
 public:
  // `map` must be of kind map (check with object_kind first).
  MapReader(const msgpack::object& map, std::string frame_type);

  bool has(std::string_view key);  // the key is present (any type)
  bool is_nil(std::string_view key);  // the key is present and nil
  void str(std::string_view key, std::string* out);
  void int64(std::string_view key, int64_t* out);
  void int32(std::string_view key, int* out);
  void number(std::string_view key, double* out);             // float or int
  void opt_number(std::string_view key, std::optional<double>* out);  // nil or missing -> nullopt
  void opt_bool(std::string_view key, bool* out);  // missing -> *out unchanged (the default)
  void opt_int32(std::string_view key, int* out);  // missing -> *out unchanged
  void opt_str(std::string_view key, std::string* out);  // nil or missing -> *out unchanged
  void opt_int_list(std::string_view key, std::vector<int64_t>* out);  // missing -> unchanged
  void int_list(std::string_view key, std::vector<int64_t>* out);
  void str_list(std::string_view key, std::vector<std::string>* out);
  void number_list(std::string_view key, std::vector<double>* out);  // floats or ints
  void number_map(std::string_view key, std::map<std::string, double>* out);
  void opt_bool_or_nil(std::string_view key, std::optional<bool>* out);  // nil or missing -> nullopt
  void require(std::string_view key);  // a "missing field" error unless the key is present
  // Records that `key` holds `value`, which is none of the spellings `want` names.
  void unknown_value(std::string_view key, std::string_view value, std::string_view want);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  // Returns the value for `key`, or nullptr (setting a "missing" error if `required`).
  const msgpack::object* find(std::string_view key, bool required);
  void fail_type(std::string_view key, const msgpack::object& value, std::string_view want);
  // A required array whose every element `element(object, T*)` reads, else an error naming
  // the element's index and `want`.
  template <typename T, typename Element>
  void list(std::string_view key, std::vector<T>* out, std::string_view want, Element element);

  const msgpack::object& map_;
  std::string frame_type_;
  std::string error_;
};

// Checks the envelope of a frame: `o` is a map, with "type" str and "version" int equal to
// `version` (each protocol passes its own: kVersion for the wire, the judge pipe's for the
// pipe). On success stores the type in *type and returns ""; otherwise returns the error.
std::string read_envelope(const msgpack::object& o, std::string* type, int version);

// decode() without its fast path for RESULT frames: the general decoder alone, which the
// fast path must agree with on every input (tests/protocol compare the two).
DecodeResult decode_without_fast_path(std::string_view bytes);

// Limits for unpacking an untrusted buffer of `size` bytes: no container can claim more
// elements than there are bytes, and nesting is bounded, so garbage cannot make the
// unpacker allocate gigabytes or recurse deeply.
msgpack::unpack_limit limits_for(std::size_t size);

}  // namespace palladium::wire

#endif  // PALLADIUM_PROTOCOL_WIRE_FIELDS_HPP_
