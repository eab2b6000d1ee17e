// The schema-v2 database today's main wrote (tests/store/data/schema_v2/, with how it was made),
// loaded from its text dump into a fresh file, and what its stored YAML says each run is.

#ifndef PALLADIUM_TESTS_STORE_SCHEMA_V2_FIXTURE_HPP_
#define PALLADIUM_TESTS_STORE_SCHEMA_V2_FIXTURE_HPP_

#include <sqlite3.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace palladium::schema_v2 {

inline std::filesystem::path data_dir() {
  return std::filesystem::path(PALLADIUM_SOURCE_DIR) / "tests" / "store" / "data" / "schema_v2";
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes the dump's database to `path` (which must not exist) with plain SQLite.
inline void load(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("open " + path);
  char* error = nullptr;
  const std::string sql = read_file(data_dir() / "fixture.sql");
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("loading fixture.sql: " + message);
}

// What a run's stored config says, read here with yaml-cpp as the v2 reports read it: `method`
// (default iterative); the provider for replay/synthetic/hand_tuned, else llm.model; the
// `workloads` list.
struct Said {
  std::string method, model;
  std::vector<std::string> suite;
};

inline Said said(const std::string& config_text) {
  const YAML::Node root = YAML::Load(config_text);
  Said s;
  s.method = root["method"] ? root["method"].as<std::string>() : "iterative";
  const std::string provider = root["llm"]["provider"].as<std::string>();
  s.model = provider == "replay" || provider == "synthetic" || provider == "hand_tuned"
                ? provider
                : root["llm"]["model"].as<std::string>();
  s.suite = root["workloads"].as<std::vector<std::string>>();
  return s;
}

}  // namespace palladium::schema_v2

#endif  // PALLADIUM_TESTS_STORE_SCHEMA_V2_FIXTURE_HPP_
