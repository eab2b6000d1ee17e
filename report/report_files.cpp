#include "report/report_files.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "report/report_input.hpp"
#include "report/run_report.hpp"
#include "report/sweep_report_costs.hpp"
#include "workloads/workload_catalog.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace palladium {
namespace {

void write_atomically(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error(tmp.string() + ": cannot write");
  }
  fs::rename(tmp, path);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string opt(const std::optional<double>& v) { return v ? fmt("%.6g", *v) : ""; }

std::string timing_note(const std::string& timing) {
  if (timing == "cpu-wall") return "CPU interpret-mode wall clock, NOT a TPU time or speedup";
  if (timing == "tpu-wall-fallback") return "TPU host wall clock, a lower bound";
  return "TPU device time from the profiler";
}

}  // namespace

std::vector<fs::path> write_report_files(const fs::path& dir, const SweepReportInput& input,
                                         const nlohmann::ordered_json& report,
                                         const std::function<std::string(int64_t)>& code_of) {
  std::vector<fs::path> written;
  auto put = [&](const fs::path& rel, const std::string& text) {
    write_atomically(dir / rel, text);
    written.push_back(dir / rel);
  };
  put("report.json", report.dump(2) + "\n");
  put("report.md", sweep_report_markdown(report));
  for (const auto& [name, text] : sweep_report_csv(report)) put(name, text);

  // Every candidate of each workload, across cells, for the history files.
  std::map<std::string, std::string> history;
  for (const auto& cell : input.cells)
    for (const auto& c : cell.candidates) {
      auto& h = history[c.workload];
      if (h.empty())
        h = "cell,run_id,seed,sample_index,candidate_id,verdict,kernel_ms,baseline_ms,speedup,"
            "timing_kind\n";
      std::string key = cell.key;
      if (key.find_first_of(",\"") != std::string::npos) key = "\"" + key + "\"";
      h += key + "," + (cell.run_id ? std::to_string(*cell.run_id) : "") + "," +
           std::to_string(c.seed) + "," + std::to_string(c.sample_index) + "," +
           std::to_string(c.id) + "," +
           (c.verdict ? std::string(to_string(*c.verdict)) : std::string("not evaluated")) + "," +
           opt(c.kernel_ms) + "," + opt(c.baseline_ms) + "," + opt(c.speedup) + "," +
           c.timing_kind + "\n";
    }
  for (const auto& [w, text] : history) put(fs::path("kernels") / (w + ".history.csv"), text);

  for (const auto& w : report["workloads"]) {
    for (const auto& b : w["best"]) {
      const std::string id = w["id"], timing = b["timing"];
      std::string header =
          "# Palladium: the best kernel found for workload " + id + ".\n"
          "# Cell " + b["cell"].get<std::string>() + ", seed " +
          std::to_string(b["seed"].get<int64_t>()) + ", sample " +
          std::to_string(b["sample_index"].get<int>()) + ", candidate " +
          std::to_string(b["candidate_id"].get<int64_t>()) + "; model: " +
          b["model"].get<std::string>() + ".\n"
          "# Verdict correct; " +
          (b["kernel_ms"].is_number() && b["baseline_ms"].is_number()
               ? fmt("kernel %.4g ms", b["kernel_ms"].get<double>()) +
                     fmt(" vs XLA %.4g ms", b["baseline_ms"].get<double>())
               : std::string("times not recorded")) +
          fmt(" = %.3fx", b["speedup"].get<double>()) + " [timing " + timing + ": " +
          timing_note(timing) + "].\n" +
          (w["degenerate"].get<bool>()
               ? "# WARNING: this workload is degenerate (its reference ignores an input); the "
                 "speedup is not meaningful.\n"
               : "") +
          "# Drop-in: defines workload(*inputs) with the inputs and outputs of " +
          (workload_catalog().find(id) ? workload_catalog().find(id)->module : "workload " + id) +
          ". Every candidate of this workload: " + b["history"].get<std::string>() +
          ".\n\n";
      put(b["file"].get<std::string>(), header + code_of(b["candidate_id"].get<int64_t>()));
    }
  }
  return written;
}

std::vector<fs::path> plot_report(const fs::path& dir, const fs::path& home) {
  std::string python = (home / ".venv" / "bin" / "python").string();
  if (access(python.c_str(), X_OK) != 0) python = "python3";
  std::string script = (home / "scripts" / "plot_report.py").string();
  std::string json = (dir / "report.json").string(), out_dir = dir.string();
  fs::path log = dir / "plot.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv{python.data(), script.data(), json.data(), out_dir.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + python + " for " + script);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ignored;
  fs::remove(log, ignored);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(script + " failed:\n" + text.str());
  std::vector<fs::path> pngs;
  for (std::string line; std::getline(text, line);)
    if (line.size() > 4 && line.compare(line.size() - 4, 4, ".png") == 0) pngs.emplace_back(line);
  return pngs;
}

std::vector<fs::path> write_sweep_report(const std::string& db, std::optional<int64_t> sweep_id,
                                         const fs::path& dir, const fs::path& home, bool plots) {
  auto store = RunStore::open(db, RunStore::Mode::read_only);
  auto input = collect_report_input(
      *store, sweep_id, load_input_sensitivity(home / "workloads" / "input_sensitivity.json"));
  input.costs = load_workload_costs(home / "workloads" / "workload_costs.json");
  auto files = write_report_files(dir, input, sweep_report_json(input), [&](int64_t id) {
    auto s = store->find_sample(id);
    if (!s) throw StoreError(db + ": no sample " + std::to_string(id));
    return s->code;
  });
  if (plots) {
    auto pngs = plot_report(dir, home);
    files.insert(files.end(), pngs.begin(), pngs.end());
  }
  return files;
}

}  // namespace palladium
