// The reports of the schema-v2 database today's main wrote (tests/store/data/schema_v2/) are
// byte for byte the ones that main gave, both when this build reads the file as it is
// (read-only) and after it migrated it to version 3, where the method, model label and suite
// come from the runs table rather than from each run's stored YAML.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "report/report_files.hpp"
#include "report/report_input.hpp"
#include "report/run_report.hpp"
#include "report/sweep_report_costs.hpp"
#include "store/run_store.hpp"
#include "tests/store/schema_v2_fixture.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

const std::filesystem::path kWorkloads = std::filesystem::path(PALLADIUM_SOURCE_DIR) / "workloads";

void expect_reports_as_main_gave(const std::string& db) {
  auto store = RunStore::open(db, RunStore::Mode::read_only);
  const auto sensitivity = load_input_sensitivity(kWorkloads / "input_sensitivity.json");
  // `palladium report DB --run N --format json`
  for (const auto& run : store->runs()) {
    SCOPED_TRACE("run " + std::to_string(run.id));
    const auto json =
        report_json(*store, run.id, stored_suite(run.suite, db), sensitivity).dump(2) + "\n";
    EXPECT_EQ(json, schema_v2::read_file(schema_v2::data_dir() /
                                         ("run" + std::to_string(run.id) + ".json")));
  }
  // `palladium report DB --out DIR --no-plots`
  auto input = collect_report_input(*store, std::nullopt, sensitivity);
  input.costs = load_workload_costs(kWorkloads / "workload_costs.json");
  const auto out = std::filesystem::path(db + ".report");
  std::filesystem::remove_all(out);
  write_report_files(out, input, sweep_report_json(input),
                     [&](int64_t id) { return store->find_sample(id)->code; });
  for (const char* file : {"report.json", "report.md", "cells.csv", "table2.csv"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(schema_v2::read_file(out / file), schema_v2::read_file(schema_v2::data_dir() / file));
  }
  std::filesystem::remove_all(out);
}

TEST(MigratedReport, AVersion2DatabaseReadAsItIsReportsAsMainDid) {
  TempDb tmp;
  schema_v2::load(tmp.path());
  expect_reports_as_main_gave(tmp.path());
}

TEST(MigratedReport, AMigratedDatabaseReportsAsMainDid) {
  TempDb tmp;
  schema_v2::load(tmp.path());
  RunStore::open(tmp.path());  // migrates to version 3
  expect_reports_as_main_gave(tmp.path());
}

}  // namespace
}  // namespace palladium
