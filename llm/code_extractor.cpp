#include "llm/code_extractor.hpp"

#include <cctype>
#include <optional>
#include <vector>

namespace palladium {

namespace {

struct Block {
  std::string info;  // lower-cased first word of the info string
  std::string body;
  bool closed = false;
};

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string normalize_newlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

size_t indent_of(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

size_t backtick_run(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '`') ++n;
  return n;
}

bool is_blank(std::string_view s) {
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// If `line` opens a fence, its backtick count and info word.
std::optional<std::pair<size_t, std::string>> opening_fence(
    std::string_view line) {
  std::string_view rest = line.substr(indent_of(line));
  const size_t ticks = backtick_run(rest);
  if (ticks < 3) return std::nullopt;
  std::string_view info = rest.substr(ticks);
  // CommonMark: a backtick fence's info string may not contain backticks,
  // which also keeps inline ```code``` spans from opening a block.
  if (info.find('`') != std::string_view::npos) return std::nullopt;
  info = info.substr(indent_of(info));
  size_t word_end = 0;
  while (word_end < info.size() &&
         !std::isspace(static_cast<unsigned char>(info[word_end])) &&
         info[word_end] != '{') {
    ++word_end;
  }
  std::string word(info.substr(0, word_end));
  for (char& c : word) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return std::make_pair(ticks, std::move(word));
}

bool closes_fence(std::string_view line, size_t ticks) {
  std::string_view rest = line.substr(indent_of(line));
  const size_t n = backtick_run(rest);
  return n >= ticks && is_blank(rest.substr(n));
}

// Strips up to `indent` leading spaces/tabs.
std::string_view dedent(std::string_view line, size_t indent) {
  size_t i = 0;
  while (i < indent && i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
    ++i;
  }
  return line.substr(i);
}

std::vector<Block> fenced_blocks(std::string_view text) {
  std::vector<Block> blocks;
  const std::vector<std::string_view> lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size()) {
    auto fence = opening_fence(lines[i]);
    if (!fence) {
      ++i;
      continue;
    }
    const size_t indent = indent_of(lines[i]);
    Block block;
    block.info = std::move(fence->second);
    ++i;
    while (i < lines.size() && !closes_fence(lines[i], fence->first)) {
      block.body += dedent(lines[i], indent);
      block.body += '\n';
      ++i;
    }
    block.closed = i < lines.size();
    ++i;  // the closing fence, if any
    if (!is_blank(block.body)) blocks.push_back(std::move(block));
  }
  return blocks;
}

bool is_python(const std::string& info) {
  return info == "python" || info == "py" || info == "python3";
}

bool defines_workload(const std::string& body) {
  for (std::string_view line : split_lines(body)) {
    if (indent_of(line) != 0) continue;  // the module's own workload, not a nested helper
    if (line.rfind("def workload(", 0) == 0 || line.rfind("def workload (", 0) == 0 ||
        line.rfind("workload = ", 0) == 0 || line.rfind("workload=", 0) == 0) {
      return true;
    }
  }
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits `text` into what is outside thinking tags and what is inside them.
void split_thinking(const std::string& text, std::string& answer, std::string& thinking) {
  static const char* kTags[] = {"think", "thinking", "reasoning"};
  const std::string low = lower(text);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = std::string::npos, open_len = 0;
    std::string close_tag;
    for (const char* tag : kTags) {
      const std::string o = std::string("<") + tag + ">";
      const size_t at = low.find(o, pos);
      if (at < open) {
        open = at;
        open_len = o.size();
        close_tag = std::string("</") + tag + ">";
      }
    }
    if (open == std::string::npos) {
      answer.append(text, pos, std::string::npos);
      return;
    }
    answer.append(text, pos, open - pos);
    answer += '\n';
    const size_t start = open + open_len;
    const size_t close = low.find(close_tag, start);
    if (close == std::string::npos) {  // cut off while thinking
      thinking.append(text, start, std::string::npos);
      return;
    }
    thinking.append(text, start, close - start);
    thinking += '\n';
    pos = close + close_tag.size();
  }
}

std::string choose(const std::vector<Block>& blocks) {
  const Block* last_closed = nullptr;
  const Block* last_any = nullptr;
  for (const Block& b : blocks) {
    if (!defines_workload(b.body)) continue;
    last_any = &b;
    if (b.closed) last_closed = &b;
  }
  if (last_closed) return last_closed->body;
  if (last_any) return last_any->body;
  for (const Block& b : blocks) {
    if (is_python(b.info)) return b.body;
  }
  if (!blocks.empty()) return blocks.front().body;
  return "";
}

}  // namespace

std::string extract_code(std::string_view response) {
  const std::string text = normalize_newlines(response);
  std::string answer, thinking;
  split_thinking(text, answer, thinking);
  std::string code = choose(fenced_blocks(answer));
  if (code.empty() && !thinking.empty()) code = choose(fenced_blocks(thinking));
  return code;
}

}  // namespace palladium
