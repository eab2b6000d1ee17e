#include "report/evaluation_report.hpp"

#include <sstream>
#include <type_traits>

namespace palladium {
namespace {

// One evaluation field as JSON: enums by their spelling, absent optionals as null (an absent
// stage or timing kind as "", the spelling the store keeps).
template <typename T>
nlohmann::json json_value(const T& value) {
  return nlohmann::json(value);
}
nlohmann::json json_value(Verdict v) { return std::string(to_string(v)); }
template <typename E>
std::enable_if_t<std::is_enum_v<E>, nlohmann::json> json_value(const std::optional<E>& v) {
  return spelling(v);
}
template <typename T>
std::enable_if_t<!std::is_enum_v<T>, nlohmann::json> json_value(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

nlohmann::json evaluation_json(const Evaluated& r, const std::string& workload) {
  nlohmann::json j{{"workload", workload},
                   {"agent_id", r.agent.agent_id},
                   {"backend", r.agent.backend}};
  visit_fields(r.evaluation, [&](const FieldSpec& spec, const auto& value) {
    j[std::string(spec.key)] = json_value(value);
  });
  // The same rule a run stores: correct and both times positive.
  auto ratio = speedup(r.evaluation);
  j["speedup"] = ratio ? nlohmann::json(*ratio) : nlohmann::json();
  return j;
}

void print_evaluation(std::ostream& out, const Evaluated& answer, const std::string& workload) {
  const Evaluation& r = answer.evaluation;
  auto num = [](const std::optional<double>& v, const char* unit) {
    if (!v) return std::string("-");
    std::ostringstream s;
    s << *v << unit;
    return s.str();
  };
  const std::string numerics_path = spelling(r.numerics_path);
  const std::string timing_kind = spelling(r.timing_kind);
  out << "verdict    " << to_string(r.verdict) << "\n"
            << "stage      " << spelling(r.stage) << "\n"
            << "workload   " << workload << " on " << answer.agent.backend << " (agent "
            << answer.agent.agent_id << ")\n"
            << "numerics   max_abs_err " << num(r.max_abs_err, "") << ", max_rel_err "
            << num(r.max_rel_err, "")
            << (numerics_path.empty() ? "" : " [checked by: " + numerics_path + "]") << "\n"
            << "timing     kernel " << num(r.kernel_ms, " ms") << ", XLA baseline "
            << num(r.baseline_ms, " ms") << " [" << (timing_kind.empty() ? "untimed" : timing_kind)
            << "]\n";
  if (auto ratio = speedup(r)) {
    // The run report's band: the baseline's median over the kernel's interquartile band. One
    // timed call has no band, and ranks nothing.
    out << "speedup    " << *ratio << "x";
    if (r.timing_runs > 1 && r.kernel_ms_low && r.kernel_ms_high && *r.kernel_ms_low > 0 &&
        *r.kernel_ms_high > 0)
      out << " [" << *r.baseline_ms / *r.kernel_ms_high << ", "
                << *r.baseline_ms / *r.kernel_ms_low << "] over " << r.timing_runs
                << " timed runs";
    else
      out << " (one timed run: no band)";
    out << "\n";
  }
  if (r.timing_kind == TimingKind::cpu_wall)
    out << "           (CPU wall clock of the interpret mode: NOT a TPU time or speedup)\n";
  if (!r.stage_ms.empty()) {
    // Pipeline order first (docs/architecture.md), then anything newer.
    out << "stages    ";
    auto rest = r.stage_ms;
    for (const char* stage : {"extract", "lint", "import", "trace", "lower", "numerics", "timing"}) {
      if (auto it = rest.find(stage); it != rest.end()) {
        out << " " << stage << " " << it->second << " ms;";
        rest.erase(it);
      }
    }
    for (const auto& [stage, ms] : rest) out << " " << stage << " " << ms << " ms;";
    out << "\n";
  }
  if (!r.error_signature.empty()) out << "signature  " << r.error_signature << "\n";
  if (!r.error.empty()) out << "\n--- error ---\n" << r.error << "\n";
  if (!r.stdout_text.empty()) out << "\n--- candidate stdout ---\n" << r.stdout_text << "\n";
  if (!r.stderr_text.empty()) out << "\n--- candidate stderr ---\n" << r.stderr_text << "\n";
}

}  // namespace palladium
