#include "config/config_reader.hpp"

#include <cmath>
#include <cstdio>

namespace palladium {

YAML::Node ConfigReader::load(const std::string& yaml_text) const {
  try {
    return YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(origin_ + ": YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                      ": " + e.msg);
  }
}

void ConfigReader::fail(const std::string& key_path, const std::string& what) const {
  throw ConfigError(origin_ + ": " + key_path + ": " + what);
}

void ConfigReader::check_keys(const YAML::Node& map, const std::string& where,
                              const std::set<std::string>& allowed) const {
  const std::string here = where.empty() ? "(top level)" : where;
  if (!map.IsMap()) fail(here, "expected a mapping");
  std::set<std::string> seen;
  for (const auto& kv : map) {
    std::string key;
    try {
      key = kv.first.as<std::string>();
    } catch (const YAML::Exception&) {
      fail(here, "has a key that is not a string");
    }
    const std::string path = where.empty() ? key : where + "." + key;
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(path, "unknown key (expected one of: " + list + ")");
    }
    if (!seen.insert(key).second) {
      fail(path, "is given twice (line " + std::to_string(kv.first.Mark().line + 1) +
                     "); YAML would silently keep only one of them");
    }
  }
}

void ConfigReader::get_number(const YAML::Node& map, const std::string& key,
                              const std::string& path, double& out, double lo, double hi) const {
  double v = out;
  get(map, key, path, v);
  if (!std::isfinite(v)) fail(path, "must be a finite number (value: " + YAML::Dump(map[key]) + ")");
  if (v < lo || v > hi) {
    char range[96];
    std::snprintf(range, sizeof range, "must be between %g and %g", lo, hi);
    fail(path, std::string(range) + " (value: " + YAML::Dump(map[key]) + ")");
  }
  out = v;
}

void ConfigReader::get_int(const YAML::Node& map, const std::string& key, const std::string& path,
                           int& out, int lo, int hi) const {
  int v = out;
  get(map, key, path, v);
  if (v < lo || v > hi) {
    fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                   " (value: " + std::to_string(v) + ")");
  }
  out = v;
}

}  // namespace palladium
