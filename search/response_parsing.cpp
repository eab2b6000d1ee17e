#include "search/response_parsing.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "search/prompt_text.hpp"

namespace palladium {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The item of one list line, or "" if the line is not an item.
std::string_view list_item(std::string_view line) {
  line = trim(line);
  if (line.size() >= 2 && (line[0] == '-' || line[0] == '*') && line[1] == ' ') {
    return trim(line.substr(2));
  }
  size_t digits = 0;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits > 0 && digits + 1 < line.size() && (line[digits] == '.' || line[digits] == ')') &&
      line[digits + 1] == ' ') {
    return trim(line.substr(digits + 2));
  }
  return {};
}

// Parses a number at the start of `s` (after blanks); nullopt-like NaN if none.
double leading_number(std::string_view s) {
  s = trim(s);
  std::string buf(s.substr(0, std::min<size_t>(s.size(), 64)));
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end == buf.c_str()) return std::nan("");
  return v;
}

}  // namespace

std::vector<std::string> parse_strategy_list(std::string_view text) {
  const std::string low = lower(text);
  size_t begin = 0, end = text.size();
  if (auto open = low.find("<strategies>"); open != std::string::npos) {
    begin = open + std::string_view("<strategies>").size();
    auto close = low.find("</strategies>", begin);
    end = close == std::string::npos ? text.size() : close;
  }
  std::vector<std::string> out;
  std::string_view body = text.substr(begin, end - begin);
  while (!body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    if (!trim(line).empty() && trim(line).front() == '#') continue;
    std::string_view item = list_item(line);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::string extract_plan(std::string_view response) {
  size_t start = 0;
  const std::string low = lower(response);
  for (std::string_view marker : {"</think>", "</budget:thinking>", "</planning>"}) {
    auto pos = low.rfind(marker);
    if (pos != std::string::npos) start = std::max(start, pos + marker.size());
  }
  std::string_view plan = trim(response.substr(start));
  return truncate_middle(plan, kMaxPlanChars, kMaxPlanChars / 2);
}

double parse_translation_score(std::string_view response) {
  const std::string low = lower(response);
  double v = std::nan("");
  if (auto pos = low.find("score:"); pos != std::string::npos) {
    v = leading_number(response.substr(pos + 6));
  }
  if (std::isnan(v)) {
    std::string_view t = trim(response);
    size_t sp = 0;
    while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
    std::string_view token = t.substr(0, sp);
    char* end = nullptr;
    std::string buf(token);
    double x = std::strtod(buf.c_str(), &end);
    // Python's float() takes the whole token or fails.
    if (!buf.empty() && end == buf.c_str() + buf.size()) v = x;
  }
  if (std::isnan(v)) return 0.0;
  return std::clamp(v, 0.0, 10.0);
}

}  // namespace palladium
