#include "agent/agent_log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace palladium::agent {

std::shared_ptr<spdlog::logger> agent_log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("agent")) return existing;
    try {
      return spdlog::stderr_color_mt("agent");
    } catch (const spdlog::spdlog_ex&) {
      return spdlog::get("agent");  // another thread registered it first
    }
  }();
  return logger;
}

}  // namespace palladium::agent
