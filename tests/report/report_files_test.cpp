#include "report/report_files.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace palladium {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SweepReportInput input() {
  SweepReportInput in;
  in.title = "files";
  for (int seed = 0; seed < 2; ++seed) {
    ReportCell cell;
    cell.key = "seed=" + std::to_string(seed);
    cell.params = {{"seed", std::to_string(seed)}};
    cell.run_id = seed + 1;
    cell.status = "finished";
    cell.method = "iterative";
    cell.model = "replay";
    cell.suite = {"8p", "12p"};
    for (int i = 0; i < 3; ++i) {
      ReportCandidate c;
      c.id = 10 * seed + i;
      c.workload = i == 2 ? "12p" : "8p";
      c.seed = seed;
      c.sample_index = i;
      c.verdict = i == 1 ? Verdict::correct : Verdict::lowering_error;
      if (i == 1) {
        c.speedup = 1.5 + seed;
        c.kernel_ms = 2.0;
        c.baseline_ms = 2.0 * (1.5 + seed);
      }
      c.timing_kind = "cpu-wall";
      cell.candidates.push_back(c);
    }
    in.cells.push_back(cell);
  }
  ReportCandidate ref;
  ref.workload = "8p";
  ref.verdict = Verdict::correct;
  ref.speedup = 2.0;
  ref.kernel_ms = 1.0;
  ref.timing_kind = "cpu-wall";
  in.hand_tuned["8p"] = ref;
  return in;
}

class ReportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("palladium-report-files-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportFilesTest, WritesTablesKernelsAndHistories) {
  auto in = input();
  auto report = sweep_report_json(in);
  auto written = write_report_files(dir_, in, report, [](int64_t id) {
    return "def workload(a, b):  # candidate " + std::to_string(id) + "\n    return a @ b\n";
  });
  for (const char* f : {"report.json", "report.md", "table2.csv", "table3.csv", "figure4.csv",
                        "budget_curves.csv", "cells.csv", "kernels/8p.py",
                        "kernels/8p.history.csv", "kernels/12p.history.csv"})
    EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  EXPECT_FALSE(fs::exists(dir_ / "kernels/12p.py")) << "no correct kernel, no file";
  auto kernel = slurp(dir_ / "kernels/8p.py");
  EXPECT_NE(kernel.find("def workload(a, b):  # candidate 11\n"), std::string::npos)
      << "the best is seed 1's 2.5x candidate:\n" << kernel;
  EXPECT_NE(kernel.find("NOT a TPU time or speedup"), std::string::npos);
  EXPECT_NE(kernel.find("model: replay"), std::string::npos);
  EXPECT_NE(kernel.find("inputs and outputs of workloads/wl_8p.py."), std::string::npos)
      << "the module's path comes from the catalog";
  auto history = slurp(dir_ / "kernels/8p.history.csv");
  EXPECT_EQ(std::count(history.begin(), history.end(), '\n'), 5) << history;  // header + 4
  EXPECT_NE(history.find("seed=1,2,1,1,11,correct,2,5,2.5,cpu-wall"), std::string::npos) << history;
  EXPECT_EQ(nlohmann::ordered_json::parse(slurp(dir_ / "report.json")), report);
}

TEST_F(ReportFilesTest, PlotsEveryFigureFromTheJson) {
  auto in = input();
  auto report = sweep_report_json(in);
  write_report_files(dir_, in, report, [](int64_t) { return std::string("x = 1\n"); });
  auto pngs = plot_report(dir_, PALLADIUM_SOURCE_DIR);
  ASSERT_EQ(pngs.size(), 8u);
  for (const char* f : {"table2.png", "table3.png", "figure4.png", "outcome_heatmap.png",
                        "budget_curves.png", "budget_methods.png", "fast_p.png", "cost_solved.png"}) {
    ASSERT_TRUE(fs::exists(dir_ / f)) << f;
    EXPECT_GT(fs::file_size(dir_ / f), 5000u) << f;
    EXPECT_EQ(slurp(dir_ / f).substr(1, 3), "PNG");
  }
}

TEST_F(ReportFilesTest, APlotFailureCarriesTheScriptsOutput) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "report.json") << "{not json";
  try {
    plot_report(dir_, PALLADIUM_SOURCE_DIR);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("JSONDecodeError"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace palladium
