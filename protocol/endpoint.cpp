#include "protocol/endpoint.hpp"

#include <regex>

namespace palladium {

bool is_loopback_endpoint(const std::string& endpoint) {
  static const std::regex loopback(
      R"(^tcp://(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):\d+$)");
  return std::regex_match(endpoint, loopback);
}

}  // namespace palladium
