#include "actors/errors.hpp"

namespace palladium {
namespace {

const caf::atom_value kCategory = caf::atom("palladium");

}  // namespace

caf::error make_error(Errc code, std::string message) {
  return caf::error(static_cast<uint8_t>(code), kCategory, caf::make_message(std::move(message)));
}

std::optional<Errc> errc_of(const caf::error& error) {
  if (!error) return std::nullopt;
  if (error.category() == kCategory) return static_cast<Errc>(error.code());
  if (error.category() == caf::atom("system")) {
    switch (static_cast<caf::sec>(error.code())) {
      case caf::sec::request_timeout:
        return Errc::deadline_exceeded;
      case caf::sec::request_receiver_down:
        return Errc::unavailable;
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string error_message(const caf::error& error) {
  if (error.category() == kCategory && error.context().match_elements<std::string>())
    return error.context().get_as<std::string>(0);
  return caf::to_string(error);
}

void register_error_category(caf::actor_system_config& config) {
  config.add_error_category(kCategory, [](uint8_t code, caf::atom_value, const caf::message& ctx) {
    std::string text = "palladium:" + std::string(to_string(static_cast<Errc>(code)));
    if (ctx.match_elements<std::string>()) text += ": " + ctx.get_as<std::string>(0);
    return text;
  });
}

}  // namespace palladium
