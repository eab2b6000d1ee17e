#include "protocol/errc.hpp"

#include <array>
#include <utility>

namespace palladium {
namespace {

constexpr std::array<std::pair<Errc, std::string_view>, 16> kNames = {{
    {Errc::unavailable, "unavailable"},
    {Errc::deadline_exceeded, "deadline_exceeded"},
    {Errc::resource_exhausted, "resource_exhausted"},
    {Errc::aborted, "aborted"},
    {Errc::invalid_argument, "invalid_argument"},
    {Errc::not_found, "not_found"},
    {Errc::already_exists, "already_exists"},
    {Errc::permission_denied, "permission_denied"},
    {Errc::unauthenticated, "unauthenticated"},
    {Errc::failed_precondition, "failed_precondition"},
    {Errc::out_of_range, "out_of_range"},
    {Errc::unimplemented, "unimplemented"},
    {Errc::internal, "internal"},
    {Errc::data_loss, "data_loss"},
    {Errc::cancelled, "cancelled"},
    {static_cast<Errc>(0), "ok"},
}};

}  // namespace

std::string_view to_string(Errc code) {
  for (const auto& [c, name] : kNames)
    if (c == code) return name;
  return "unknown";
}

std::optional<Errc> errc_from_string(std::string_view text) {
  for (const auto& [c, name] : kNames)
    if (name == text && c != static_cast<Errc>(0)) return c;
  return std::nullopt;
}

}  // namespace palladium
