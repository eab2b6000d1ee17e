#include "llm/context_blocks.hpp"

#include <algorithm>
#include <set>

#include <yaml-cpp/yaml.h>

#include "llm/token_estimate.hpp"
#include "llm/yaml_file.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw ContextError(file.string() + ": " + what);
}

std::string read_text(const fs::path& file) { return read_text_file<ContextError>(file); }

YAML::Node read_yaml(const fs::path& file) { return read_yaml_file<ContextError>(file); }

std::vector<std::string> string_list(const YAML::Node& node, const fs::path& file,
                                     const std::string& where) {
  if (!node || !node.IsSequence()) fail(file, where + ": expected a list");
  std::vector<std::string> out;
  for (const auto& item : node) {
    if (!item.IsScalar()) fail(file, where + ": expected a list of strings");
    out.push_back(item.as<std::string>());
  }
  return out;
}

// A section file must stay inside the context directory.
bool escapes(const std::string& relative) {
  const fs::path p(relative);
  if (p.is_absolute()) return true;
  for (const auto& part : p) {
    if (part == "..") return true;
  }
  return false;
}

std::string trim_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

bool selected(const ContextSection& section, const std::vector<std::string>& workload_tags) {
  for (const auto& t : section.tags) {
    if (t == "all") return true;
    if (std::find(workload_tags.begin(), workload_tags.end(), t) != workload_tags.end()) {
      return true;
    }
  }
  return false;
}

std::string section_text(const ContextSection& s) {
  if (!s.code) return trim_trailing_newlines(s.text) + "\n";
  return "### Example: " + fs::path(s.file).filename().string() + "\n\n```python\n" +
         trim_trailing_newlines(s.text) + "\n```\n";
}

}  // namespace

const std::vector<std::string>& context_block_names() {
  static const std::vector<std::string> names{"hardware", "api", "examples", "rules"};
  return names;
}

std::string context_block_heading(std::string_view name, std::string_view title) {
  std::string out = "## Context (";
  out += name;
  out += "): ";
  out += title;
  return out;
}

std::vector<std::string> context_blocks_in(std::string_view prompt_text) {
  std::vector<std::string> found;
  for (const auto& name : context_block_names()) {
    const std::string marker = "## Context (" + name + "): ";
    if (prompt_text.find(marker) != std::string_view::npos) found.push_back(name);
  }
  return found;
}

std::string check_block_names(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  const auto& known = context_block_names();
  for (const auto& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      return "unknown block '" + n + "' (known: hardware, api, examples, rules)";
    }
    if (!seen.insert(n).second) return "block '" + n + "' is listed twice";
  }
  return "";
}

int AssembledContext::tokens() const { return estimate_tokens(text.size()); }

ContextLibrary ContextLibrary::load(const fs::path& context_dir) {
  ContextLibrary lib;
  lib.dir_ = context_dir;
  const fs::path manifest = context_dir / "blocks.yaml";
  const YAML::Node root = read_yaml(manifest);
  if (!root.IsMap()) fail(manifest, "expected a mapping");
  if (!root["version"] || root["version"].as<std::string>() != "1") {
    fail(manifest, "version: expected 1");
  }
  std::vector<std::string> vocab = string_list(root["tags"], manifest, "tags");
  auto known_tag = [&](const std::string& t) {
    return std::find(vocab.begin(), vocab.end(), t) != vocab.end();
  };
  const YAML::Node blocks = root["blocks"];
  if (!blocks || !blocks.IsMap()) fail(manifest, "blocks: expected a mapping");
  std::vector<std::string> order;
  for (const auto& kv : blocks) order.push_back(kv.first.as<std::string>());
  if (order != context_block_names()) {
    fail(manifest, "blocks: expected exactly hardware, api, examples, rules in that order");
  }
  for (const auto& name : order) {
    const YAML::Node b = blocks[name];
    const std::string where = "blocks." + name;
    if (!b.IsMap() || !b["title"] || !b["title"].IsScalar()) {
      fail(manifest, where + ": needs a title");
    }
    ContextBlock block;
    block.name = name;
    block.title = b["title"].as<std::string>();
    const YAML::Node secs = b["sections"];
    if (!secs || !secs.IsSequence() || secs.size() == 0) {
      fail(manifest, where + ".sections: expected a non-empty list");
    }
    for (size_t i = 0; i < secs.size(); ++i) {
      const std::string swhere = where + ".sections[" + std::to_string(i) + "]";
      const YAML::Node s = secs[i];
      if (!s.IsMap() || !s["file"] || !s["file"].IsScalar()) {
        fail(manifest, swhere + ": needs a file");
      }
      ContextSection section;
      section.file = s["file"].as<std::string>();
      if (escapes(section.file)) fail(manifest, swhere + ": file must stay inside " + context_dir.string());
      section.tags = string_list(s["tags"], manifest, swhere + ".tags");
      for (const auto& t : section.tags) {
        if (t != "all" && !known_tag(t)) fail(manifest, swhere + ".tags: unknown tag '" + t + "'");
      }
      const std::string kind = s["kind"] ? s["kind"].as<std::string>() : "text";
      if (kind != "text" && kind != "code") fail(manifest, swhere + ".kind: expected text or code");
      section.code = kind == "code";
      section.text = read_text(context_dir / section.file);
      block.sections.push_back(std::move(section));
    }
    lib.blocks_.push_back(std::move(block));
  }

  const fs::path tags_file = context_dir / "workload_tags.yaml";
  const YAML::Node tags = read_yaml(tags_file);
  if (!tags.IsMap()) fail(tags_file, "expected a mapping of workload id -> tags");
  for (const auto& kv : tags) {
    const std::string id = kv.first.as<std::string>();
    std::vector<std::string> t = string_list(kv.second, tags_file, id);
    for (const auto& tag : t) {
      if (!known_tag(tag)) fail(tags_file, id + ": unknown tag '" + tag + "'");
    }
    lib.workload_tags_[id] = std::move(t);
  }
  return lib;
}

AssembledContext ContextLibrary::assemble(const std::string& workload_id,
                                          const std::vector<std::string>& block_names) const {
  if (auto problem = check_block_names(block_names); !problem.empty()) {
    throw ContextError("context.blocks: " + problem);
  }
  AssembledContext out;
  if (block_names.empty()) return out;
  auto it = workload_tags_.find(workload_id);
  if (it == workload_tags_.end()) {
    throw ContextError((dir_ / "workload_tags.yaml").string() + ": no tags for workload '" +
                       workload_id + "'");
  }
  for (const auto& block : blocks_) {
    if (std::find(block_names.begin(), block_names.end(), block.name) == block_names.end()) {
      continue;
    }
    AssembledBlock ab;
    ab.name = block.name;
    ab.text = context_block_heading(block.name, block.title) + "\n";
    for (const auto& s : block.sections) {
      if (!selected(s, it->second)) continue;
      ab.files.push_back(s.file);
      ab.text += "\n" + section_text(s);
    }
    ab.tokens = estimate_tokens(ab.text.size());
    if (!out.text.empty()) out.text += "\n";
    out.text += ab.text;
    out.blocks.push_back(std::move(ab));
  }
  return out;
}

std::vector<std::string> load_menu(const fs::path& context_dir, const std::string& name) {
  const fs::path file = context_dir / "menus" / (name + ".yaml");
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw ContextError("menu name '" + name + "' must be a file stem under " +
                       (context_dir / "menus").string());
  }
  YAML::Node root = read_yaml(file);
  YAML::Node list = root;
  if (root.IsMap()) {
    if (root.size() != 1) fail(file, "expected a list, or a mapping with one key holding the list");
    list = root.begin()->second;
  }
  if (!list.IsSequence()) fail(file, "expected a list of strategies");
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    std::string text;
    if (item.IsScalar()) {
      text = item.as<std::string>();
    } else if (item.IsMap() && item["strategy"] && item["strategy"].IsScalar()) {
      text = item["strategy"].as<std::string>();
    } else {
      fail(file, "item " + std::to_string(i) + ": expected a string or {strategy: string}");
    }
    if (text.find_first_not_of(" \t\n") == std::string::npos) {
      fail(file, "item " + std::to_string(i) + ": empty strategy");
    }
    out.push_back(trim_trailing_newlines(text));
  }
  if (out.empty()) fail(file, "the menu has no strategies");
  return out;
}

}  // namespace palladium
