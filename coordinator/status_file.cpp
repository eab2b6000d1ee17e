#include "coordinator/status_file.hpp"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace palladium {

std::filesystem::path status_file_path(const std::string& db_path) {
  return db_path + ".status.json";
}

void write_status_file(const std::filesystem::path& path, const CoordinatorStatus& s) {
  auto optional_count = [](int64_t v) { return v < 0 ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json j{{"version", 1},
                   {"pid", s.pid},
                   {"updated_unix_ms", s.updated_unix_ms},
                   {"command", s.command},
                   {"dispatcher",
                    {{"agents", s.agents},
                     {"slots", optional_count(s.slots)},
                     {"queued", optional_count(s.queued)},
                     {"in_flight", optional_count(s.in_flight)}}},
                   {"running_runs", s.running_runs},
                   {"sample_cap", s.sample_cap},
                   {"usd_cap", s.usd_cap ? nlohmann::json(*s.usd_cap) : nlohmann::json()},
                   {"llm",
                    {{"in_flight", optional_count(s.llm_in_flight)},
                     {"queued", optional_count(s.llm_queued)},
                     {"committed_usd", s.llm_committed_usd},
                     {"stopped", s.llm_stopped},
                     {"holding", s.llm_holding}}}};
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) throw std::runtime_error(tmp.string() + ": cannot write the status file");
  }
  std::filesystem::rename(tmp, path);
}

std::optional<CoordinatorStatus> read_status_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(in);
    if (j.at("version").get<int>() != 1) return std::nullopt;
    CoordinatorStatus s;
    auto count = [](const nlohmann::json& v) { return v.is_null() ? int64_t{-1} : v.get<int64_t>(); };
    s.pid = j.at("pid").get<int64_t>();
    s.updated_unix_ms = j.at("updated_unix_ms").get<int64_t>();
    s.command = j.at("command").get<std::string>();
    const auto& d = j.at("dispatcher");
    s.agents = d.at("agents").get<int>();
    s.slots = count(d.at("slots"));
    s.queued = count(d.at("queued"));
    s.in_flight = count(d.at("in_flight"));
    s.running_runs = j.at("running_runs").get<std::vector<int64_t>>();
    s.sample_cap = j.at("sample_cap").get<int64_t>();
    if (!j.at("usd_cap").is_null()) s.usd_cap = j.at("usd_cap").get<double>();
    if (j.contains("llm")) {
      const auto& l = j.at("llm");
      s.llm_in_flight = count(l.at("in_flight"));
      s.llm_queued = count(l.at("queued"));
      s.llm_committed_usd = l.at("committed_usd").get<double>();
      s.llm_stopped = l.at("stopped").get<std::string>();
      s.llm_holding = l.value("holding", std::string());  // absent in older files
    }
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

namespace {

// The config key (or the outside party) that relaxes a gateway limit.
std::string relax(const std::string& holding) {
  if (holding.rfind("concurrency (learned", 0) == 0)
    return "the provider's 429s lowered it; it creeps back as calls succeed";
  if (holding.rfind("concurrency", 0) == 0) return "raise llm.max_concurrent";
  if (holding.rfind("429", 0) == 0) return "the provider's own rate limit: a higher tier";
  if (holding.rfind("requests/min", 0) == 0) return "raise llm.requests_per_minute";
  if (holding.rfind("tokens/min", 0) == 0) return "raise llm.tokens_per_minute";
  if (holding.rfind("spend window", 0) == 0) return "raise llm.max_usd_per_window";
  if (holding.rfind("dollar cap", 0) == 0) return "raise llm.max_usd";
  return "";
}

}  // namespace

std::string binding_limit_now(const CoordinatorStatus& s) {
  if (s.llm_queued > 0 && !s.llm_holding.empty()) {
    const std::string first = s.llm_holding.substr(0, s.llm_holding.find(';'));
    std::string out = "the LLM gateway: " + std::to_string(s.llm_queued) +
                      " samples wait on its " + s.llm_holding + " limit";
    const std::string how = relax(first);
    return how.empty() ? out : out + " (" + how + ")";
  }
  if (s.slots > 0 && s.queued > 0 && s.in_flight >= s.slots)
    return "the TPU agents: all " + std::to_string(s.slots) + " slots busy, " +
           std::to_string(s.queued) + " candidates queued (more agents or chips)";
  if (s.slots > 0 && s.in_flight >= 0 && s.in_flight < s.slots && s.queued <= 0 &&
      s.llm_in_flight > 0)
    return "the LLM's answers: agents idle waiting for code (" +
           std::to_string(s.slots - s.in_flight) + " of " + std::to_string(s.slots) +
           " slots free while " + std::to_string(s.llm_in_flight) +
           " samples are being answered; more parallel searches or a faster model)";
  if (s.agents == 0 && s.queued > 0)
    return "no agent: " + std::to_string(s.queued) + " candidates wait for one to connect";
  return "";
}

bool status_is_live(const CoordinatorStatus& s, int64_t now_unix_ms, int64_t max_age_ms) {
  if (s.pid <= 0 || now_unix_ms - s.updated_unix_ms > max_age_ms) return false;
  return kill(static_cast<pid_t>(s.pid), 0) == 0 || errno == EPERM;
}

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace palladium
