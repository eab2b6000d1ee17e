// Reading the data files the offline model and the context blocks are made of
// (llm/synthetic/, workloads/context/): the whole file, or its YAML.
//
// Errors: each throws `Error` (constructed from one string) that starts with
// the file's path and says what is wrong: unreadable, or the YAML syntax
// error with its 1-based line. Each caller names its own error type, so its
// callers keep catching what its header documents.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

namespace palladium {

template <class Error>
std::string read_text_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot read the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <class Error>
YAML::Node read_yaml_file(const std::filesystem::path& file) {
  const std::string text = read_text_file<Error>(file);
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw Error(file.string() + ": YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                ": " + e.msg);
  }
}

}  // namespace palladium
