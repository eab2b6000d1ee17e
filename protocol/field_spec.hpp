// What a generated visit_fields() (protocol/judge_pipe.hpp) says about each field it visits.

#ifndef PALLADIUM_PROTOCOL_FIELD_SPEC_HPP_
#define PALLADIUM_PROTOCOL_FIELD_SPEC_HPP_

#include <string_view>

namespace palladium {

struct FieldSpec {
  std::string_view key;     // the wire, pipe and JSON spelling
  std::string_view column;  // the evaluations column that stores it; "" when none
  bool required = false;    // a frame without the key is malformed (nil is allowed for ?-types)
};

}  // namespace palladium

#endif  // PALLADIUM_PROTOCOL_FIELD_SPEC_HPP_
