// A database written by schema version 2 (tests/store/data/schema_v2/) opened by this build:
// read-only it is left as it is and read as if migrated; read-write it is migrated to version 3,
// each run and cell then carrying the method, model label and suite its stored YAML says.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "store/run_store.hpp"
#include "tests/store/schema_v2_fixture.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

std::string pragma(const std::string& path, const char* name) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, (std::string("PRAGMA ") + name).c_str(), -1, &st, nullptr);
  std::string out = sqlite3_step(st) == SQLITE_ROW
                        ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                        : "";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Every run and cell of `store` against what its stored YAML says.
void expect_identities_as_the_yaml_says(const RunStore& store) {
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 4u);
  std::set<std::string> methods, models;
  for (const auto& run : runs) {
    SCOPED_TRACE("run " + std::to_string(run.id));
    const auto s = schema_v2::said(run.config_text);
    EXPECT_EQ(run.method, s.method);
    EXPECT_EQ(run.model, s.model);
    EXPECT_EQ(run.suite, s.suite);
    methods.insert(run.method);
    models.insert(run.model);
  }
  // The fixture is worth its bytes only if the runs differ in what is checked.
  EXPECT_EQ(methods, (std::set<std::string>{"iterative", "iterative_context", "autocomp"}));
  EXPECT_EQ(models, (std::set<std::string>{"synthetic", "hand_tuned", "replay"}));
  const auto sweeps = store.sweeps();
  ASSERT_EQ(sweeps.size(), 1u);
  const auto cells = store.cells(sweeps[0].id);
  ASSERT_EQ(cells.size(), 3u);
  for (const auto& cell : cells) {
    SCOPED_TRACE("cell " + cell.cell_key);
    const auto s = schema_v2::said(cell.config_text);
    EXPECT_EQ(cell.method, s.method);
    EXPECT_EQ(cell.model, s.model);
    EXPECT_EQ(cell.suite, s.suite);
  }
}

TEST(SchemaMigration, AReadOnlyOpenLeavesAVersion2FileAsItIsAndReadsItAsIfMigrated) {
  TempDb tmp;
  schema_v2::load(tmp.path());
  ASSERT_EQ(pragma(tmp.path(), "user_version"), "2");
  auto store = RunStore::open(tmp.path(), RunStore::Mode::read_only);
  expect_identities_as_the_yaml_says(*store);
  EXPECT_EQ(pragma(tmp.path(), "user_version"), "2");
}

TEST(SchemaMigration, AReadWriteOpenMigratesVersion2ToStoredIdentities) {
  TempDb tmp;
  schema_v2::load(tmp.path());
  RunStore::open(tmp.path());
  EXPECT_EQ(pragma(tmp.path(), "user_version"), "3");
  // The columns hold them now: read by plain SQL, as the dashboard reads.
  sqlite3* db = nullptr;
  sqlite3_open_v2(tmp.path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT config_text, method, model, suite_json FROM runs ORDER BY id",
                     -1, &st, nullptr);
  int rows = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++rows;
    const auto s =
        schema_v2::said(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), s.method);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 2)), s.model);
    EXPECT_EQ(nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))),
              nlohmann::json(s.suite));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(rows, 4);
  // Reopened, read-only and read-write, it reads the same.
  expect_identities_as_the_yaml_says(*RunStore::open(tmp.path(), RunStore::Mode::read_only));
  expect_identities_as_the_yaml_says(*RunStore::open(tmp.path()));
  EXPECT_EQ(pragma(tmp.path(), "user_version"), "3");
}

TEST(SchemaMigration, ANewRunStoresItsIdentityFromItsConfig) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const std::string config =
      "method: autocomp\nworkloads: [8p, 12p]\nllm:\n  provider: gemini\n  model: gemini-x\n";
  const auto run = store->find_run(store->begin_or_resume_run("r", config));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->method, "autocomp");
  EXPECT_EQ(run->model, "gemini-x");
  EXPECT_EQ(run->suite, (std::vector<std::string>{"8p", "12p"}));
  // Text that is not a mapping names nothing: reports then refuse its empty suite.
  const auto odd = store->find_run(store->begin_or_resume_run("odd", "[1, 2"));
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->method, "unknown");
  EXPECT_TRUE(odd->suite.empty());
}

}  // namespace
}  // namespace palladium
