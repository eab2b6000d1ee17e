// ConfigReader: strict access to a parsed YAML config, shared by every section.
//
// Every problem is a ConfigError whose what() names the origin (usually the
// file), the dotted key path and what was wrong, so a typo in a sweep fails in
// the first second instead of an hour in. The rules every section gets by
// using it:
//   - unknown keys and duplicate keys are errors (YAML itself would keep one
//     of two duplicates silently);
//   - a value of the wrong type is an error quoting the value;
//   - floating-point values must be finite (`.inf`, `.nan` and 1e300-style
//     overflows are refused) and within the range the caller gives;
//   - lists whose entries must be distinct (seeds, workload ids) say which
//     entry is repeated.
//
// Thread safety: a ConfigReader is immutable after construction.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace palladium {

// Thrown for any problem with a config; what() names the origin and the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigReader {
 public:
  explicit ConfigReader(std::string origin) : origin_(std::move(origin)) {}

  const std::string& origin() const { return origin_; }

  // Parses YAML text; a syntax error names the line.
  YAML::Node load(const std::string& yaml_text) const;

  [[noreturn]] void fail(const std::string& key_path, const std::string& what) const;

  // Requires `map` to be a mapping whose keys are all in `allowed` and
  // distinct. `where` is the mapping's own key path ("" for the top level).
  void check_keys(const YAML::Node& map, const std::string& where,
                  const std::set<std::string>& allowed) const;

  // Reads map[key] into `out` if present (else leaves `out` as is). `path` is
  // the dotted key path used in messages.
  template <class T>
  void get(const YAML::Node& map, const std::string& key, const std::string& path, T& out) const {
    auto node = map[key];
    if (!node) return;
    try {
      out = node.as<T>();
    } catch (const YAML::Exception&) {
      fail(path, "has the wrong type (value: " + YAML::Dump(node) + ")");
    }
  }

  // A finite number in [lo, hi]; the message names the range.
  void get_number(const YAML::Node& map, const std::string& key, const std::string& path,
                  double& out, double lo, double hi) const;
  // An integer in [lo, hi] (a fraction or an out-of-range value is refused).
  void get_int(const YAML::Node& map, const std::string& key, const std::string& path, int& out,
               int lo, int hi) const;

  // A list whose entries must be distinct; the message names the repeated one.
  template <class T>
  void get_distinct(const YAML::Node& map, const std::string& key, const std::string& path,
                    std::vector<T>& out) const {
    std::vector<T> values = out;
    get(map, key, path, values);
    std::set<T> seen;
    for (const auto& v : values) {
      if (!seen.insert(v).second) fail(path, "'" + to_text(v) + "' is listed twice");
    }
    out = std::move(values);
  }

 private:
  template <class T>
  static std::string to_text(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      return v;
    } else {
      return std::to_string(v);
    }
  }

  std::string origin_;
};

}  // namespace palladium
