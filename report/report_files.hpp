// Writes a sweep report (report/sweep_report.hpp) as files, for
// `palladium report DB --out DIR`:
//
//   DIR/report.json            the report, every number
//   DIR/report.md              Markdown: tables, figure links, cells, best kernels
//   DIR/table2.csv table3.csv figure4.csv budget_curves.csv cells.csv
//   DIR/kernels/<w>.py         each workload's best kernel, ready to drop in: the
//                              candidate module as stored, under a comment header
//                              naming its cell, seed, sample, timing and model
//   DIR/kernels/<w>.history.csv  every candidate of the workload: cell, seed,
//                              sample, verdict, times, speedup, timing kind
//   DIR/*.png                  drawn by scripts/plot_report.py from report.json
//
// Files are written to a temporary name and renamed, so a reader never sees
// half a file. Errors: std::runtime_error naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/sweep_report.hpp"

namespace palladium {

// Writes everything but the PNGs; `code_of` returns a candidate's code.
// Returns the paths written.
std::vector<std::filesystem::path> write_report_files(
    const std::filesystem::path& dir, const SweepReportInput& input,
    const nlohmann::ordered_json& report, const std::function<std::string(int64_t)>& code_of);

// Runs `python scripts/plot_report.py DIR/report.json DIR` (python: the
// project venv's, else python3 on PATH) and returns the PNGs it wrote.
// Throws std::runtime_error with the script's output if it fails.
std::vector<std::filesystem::path> plot_report(const std::filesystem::path& dir,
                                               const std::filesystem::path& home);

// The whole sweep report of database `db` in `dir`: the sweep `sweep_id` (nullopt: the latest
// sweep if there is one, else every run), its files and, when `plots`, the PNGs. Returns the
// paths written; throws naming the database, a missing sample or the plot script's failure.
std::vector<std::filesystem::path> write_sweep_report(const std::string& db,
                                                      std::optional<int64_t> sweep_id,
                                                      const std::filesystem::path& dir,
                                                      const std::filesystem::path& home,
                                                      bool plots);

}  // namespace palladium
