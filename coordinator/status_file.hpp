// The live half of `palladium status`: what only the coordinator process
// knows (its agents, their slots, the dispatch queue, which cells run now),
// written by `palladium run`/`sweep` next to the database as DB.status.json
// about once a second, and read by `palladium status DB` (the database holds
// everything else: cells, runs, samples, evaluations, tokens, dollars).
//
// JSON:
//   {"version": 1, "pid", "updated_unix_ms", "command": "run"|"sweep",
//    "dispatcher": {"agents", "slots", "queued", "in_flight"},
//    "running_runs": [run_id, ...], "sample_cap": int, "usd_cap": number|null,
//    "llm": {"in_flight", "queued", "committed_usd", "stopped", "holding"}}
//   (llm: absent in older files; holding: the limit the gateways' waiting calls wait on)
//
// The file is replaced atomically (write, then rename). A reader treats it as
// live only while its pid is alive and it is younger than a few seconds;
// otherwise the coordinator is gone and only the database speaks.
//
// Errors: write_status_file throws std::runtime_error naming the path;
// read_status_file returns nullopt for a missing or unreadable file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace palladium {

struct CoordinatorStatus {
  int64_t pid = 0;
  int64_t updated_unix_ms = 0;
  std::string command;
  int agents = 0;
  int64_t slots = -1;  // -1: the dispatcher does not report slots
  int64_t queued = -1;
  int64_t in_flight = -1;
  std::vector<int64_t> running_runs;
  int64_t sample_cap = 0;  // candidates the runs may spend in all
  std::optional<double> usd_cap;
  // The LLM gateways' calls: samples being answered now and waiting for a call (a rate limit,
  // the concurrency cap), the dollars committed, and why no more calls go out ("" running).
  int64_t llm_in_flight = -1;  // -1: not reported
  int64_t llm_queued = -1;
  double llm_committed_usd = 0;
  std::string llm_stopped;
  // The limit the oldest waiting call of each gateway waits on (llm/call_scheduler.hpp
  // Stats::holding), "; "-joined; "" when none waits on a limit.
  std::string llm_holding;
};

// Which limit binds now, from what the coordinator reports: the LLM gateway's queue held at
// one of its limits, the TPU agents all busy with candidates queued, or agents idle waiting
// for code while the LLM answers. "" when nothing waits (or too little is reported to say).
// A sentence naming the limit and what would relax it.
std::string binding_limit_now(const CoordinatorStatus& status);

std::filesystem::path status_file_path(const std::string& db_path);

void write_status_file(const std::filesystem::path& path, const CoordinatorStatus& status);

std::optional<CoordinatorStatus> read_status_file(const std::filesystem::path& path);

// True while the writer process is alive and the file is at most
// `max_age_ms` old at `now_unix_ms`.
bool status_is_live(const CoordinatorStatus& status, int64_t now_unix_ms,
                    int64_t max_age_ms = 5000);

int64_t unix_ms_now();

}  // namespace palladium
