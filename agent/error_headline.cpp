#include "agent/error_headline.hpp"

#include <regex>
#include <vector>

namespace palladium {
namespace {

std::string_view trim(std::string_view s) {
  const auto blank = " \t\r";
  const auto b = s.find_first_not_of(blank);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(blank) - b + 1);
}

bool is_noise(std::string_view line) {
  return line.empty() || line.rfind("---", 0) == 0 || line.rfind("Traceback (", 0) == 0 ||
         line.rfind("File \"", 0) == 0 || line.rfind("For simplicity, JAX", 0) == 0 ||
         line.rfind("The above exception", 0) == 0 ||
         line.rfind("During handling of the above", 0) == 0 || line.rfind("^", 0) == 0 ||
         line.rfind("~", 0) == 0;
}

}  // namespace

std::string error_headline(std::string_view error) {
  static const std::regex kException(R"(^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b.*)");
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= error.size();) {
    size_t end = error.find('\n', start);
    if (end == std::string_view::npos) end = error.size();
    lines.push_back(trim(error.substr(start, end - start)));
    start = end + 1;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (std::regex_match(it->begin(), it->end(), kException)) return std::string(*it);
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!is_noise(*it)) return std::string(*it);
  }
  return {};
}

}  // namespace palladium
