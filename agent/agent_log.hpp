// The agent's logger: spdlog logger "agent" on stderr, shared by every file of agent/ so
// that the coordinator link and the slots log under one name.
//
// Threading: safe to call from any thread; the logger is created once.

#ifndef PALLADIUM_AGENT_AGENT_LOG_HPP_
#define PALLADIUM_AGENT_AGENT_LOG_HPP_

#include <memory>

#include <spdlog/spdlog.h>

namespace palladium::agent {

std::shared_ptr<spdlog::logger> agent_log();

}  // namespace palladium::agent

#endif  // PALLADIUM_AGENT_AGENT_LOG_HPP_
