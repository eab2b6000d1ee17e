#include "coordinator/status_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace palladium {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

nlohmann::ordered_json status_json(const std::string& db, const SweepReportInput& in,
                                   const std::optional<CoordinatorStatus>& live) {
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  int64_t spent = 0, cap = 0;
  double usd = 0;
  bool usd_complete = true;
  struct Best {
    double speedup = 0;
    std::string cell, timing;
  };
  std::map<std::string, Best> best;
  std::vector<std::string> order;
  for (const auto& c : in.cells) {
    int evaluated = 0, correct = 0;
    for (const auto& k : c.candidates) {
      if (!k.verdict) continue;
      ++evaluated;
      if (*k.verdict != Verdict::correct) continue;
      ++correct;
      if (k.speedup && *k.speedup > best[k.workload].speedup)
        best[k.workload] = {*k.speedup, c.key, k.timing_kind};
    }
    for (const auto& w : c.suite)
      if (!std::count(order.begin(), order.end(), w)) order.push_back(w);
    spent += static_cast<int64_t>(c.candidates.size());
    cap += c.planned;
    usd += c.usage.cost_usd;
    usd_complete = usd_complete && c.usage.cost_complete;
    bool running = live && std::count(live->running_runs.begin(), live->running_runs.end(),
                                      c.run_id.value_or(-1));
    cells.push_back({{"key", c.key},
                     {"run_id", c.run_id ? nlohmann::ordered_json(*c.run_id) : nlohmann::ordered_json()},
                     {"status", running ? std::string("running now") : c.status},
                     {"status_reason", c.status_reason},
                     {"generated", c.candidates.size()},
                     {"planned", c.planned},
                     {"evaluated", evaluated},
                     {"correct", correct},
                     {"llm_calls", c.usage.calls},
                     {"tokens", c.usage.prompt_tokens + c.usage.completion_tokens +
                                    c.usage.thinking_tokens},
                     {"cost_usd", c.usage.cost_usd}});
  }
  nlohmann::ordered_json best_json = nlohmann::ordered_json::array();
  for (const auto& w : order) {
    auto it = best.find(w);
    if (it == best.end())
      best_json.push_back({{"workload", w}, {"speedup", nullptr}});
    else
      best_json.push_back({{"workload", w},
                           {"speedup", it->second.speedup},
                           {"cell", it->second.cell},
                           {"timing", it->second.timing}});
  }
  nlohmann::ordered_json coordinator = nullptr;
  if (live) {
    double util = live->slots > 0 && live->in_flight >= 0
                      ? static_cast<double>(live->in_flight) / static_cast<double>(live->slots)
                      : -1;
    coordinator = {{"pid", live->pid},
                   {"command", live->command},
                   {"agents", live->agents},
                   {"slots", live->slots < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(live->slots)},
                   {"in_flight", live->in_flight < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(live->in_flight)},
                   {"queued", live->queued < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(live->queued)},
                   {"utilisation", util < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(util)},
                   {"llm_in_flight", live->llm_in_flight < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(live->llm_in_flight)},
                   {"llm_queued", live->llm_queued < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(live->llm_queued)},
                   {"llm_stopped", live->llm_stopped},
                   {"llm_holding", live->llm_holding},
                   {"binding", binding_limit_now(*live)}};
  }
  return {{"database", db},
          {"title", in.title},
          {"coordinator", coordinator},
          {"samples", {{"generated", spent}, {"cap", cap}}},
          {"dollars", {{"spent", usd}, {"complete", usd_complete},
                       {"cap", live && live->usd_cap ? nlohmann::ordered_json(*live->usd_cap)
                                                     : nlohmann::ordered_json()}}},
          {"cells", cells},
          {"best", best_json}};
}

std::string status_text(const nlohmann::ordered_json& s) {
  std::string out = "Status of " + s["title"].get<std::string>() + " (" +
                    s["database"].get<std::string>() + ")\n";
  const auto& c = s["coordinator"];
  if (c.is_null()) {
    out += "coordinator: not running (no live status file); the database is all there is\n";
  } else {
    out += "coordinator: pid " + std::to_string(c["pid"].get<int64_t>()) + " (" +
           c["command"].get<std::string>() + "), " + std::to_string(c["agents"].get<int>()) +
           " agent(s)";
    if (c["slots"].is_number()) out += ", " + std::to_string(c["slots"].get<int64_t>()) + " slots";
    if (c["in_flight"].is_number())
      out += ", " + std::to_string(c["in_flight"].get<int64_t>()) + " evaluating";
    if (c["utilisation"].is_number()) out += fmt(" (utilisation %.0f%%)", 100 * c["utilisation"].get<double>());
    if (c["queued"].is_number()) out += ", queue " + std::to_string(c["queued"].get<int64_t>());
    if (c["llm_in_flight"].is_number())
      out += "; LLM samples " + std::to_string(c["llm_in_flight"].get<int64_t>()) +
             " in flight, " + std::to_string(c["llm_queued"].get<int64_t>()) + " queued";
    if (!c["llm_stopped"].get<std::string>().empty())
      out += " (no more calls: " + c["llm_stopped"].get<std::string>() + ")";
    out += "\n";
    if (!c["binding"].get<std::string>().empty())
      out += "binding now: " + c["binding"].get<std::string>() + "\n";
  }
  const auto& smp = s["samples"];
  out += "samples: " + std::to_string(smp["generated"].get<int64_t>()) + " generated of " +
         std::to_string(smp["cap"].get<int64_t>()) + " budgeted; dollars: " +
         fmt("$%.4f", s["dollars"]["spent"].get<double>()) +
         (s["dollars"]["complete"].get<bool>() ? "" : " (some calls unpriced)") +
         (s["dollars"]["cap"].is_number() ? fmt(" of a $%.2f cap", s["dollars"]["cap"].get<double>())
                                          : std::string(" (no dollar cap)")) +
         "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %-14s %-17s %-10s %-8s %-9s %s\n", "cell", "status",
                "generated/budget", "evaluated", "correct", "tokens", "cost");
  out += line;
  for (const auto& cell : s["cells"]) {
    std::snprintf(line, sizeof line, "%-44s %-14s %-17s %-10d %-8d %-9lld $%.4f\n",
                  cell["key"].get<std::string>().c_str(), cell["status"].get<std::string>().c_str(),
                  (std::to_string(cell["generated"].get<int64_t>()) + "/" +
                   std::to_string(cell["planned"].get<int64_t>()))
                      .c_str(),
                  cell["evaluated"].get<int>(), cell["correct"].get<int>(),
                  static_cast<long long>(cell["tokens"].get<int64_t>()), cell["cost_usd"].get<double>());
    out += line;
  }
  out += "\nbest so far:";
  bool cpu = false;
  for (const auto& b : s["best"]) {
    out += " " + b["workload"].get<std::string>() + " ";
    if (b["speedup"].is_null()) {
      out += "-";
    } else {
      out += fmt("%.2fx", b["speedup"].get<double>());
      cpu = cpu || b["timing"] == "cpu-wall";
    }
  }
  out += "\n";
  if (cpu) out += "(cpu-wall speedups: CPU interpret-mode wall-clock ratios, NOT TPU speedups)\n";
  return out;
}

}  // namespace palladium
