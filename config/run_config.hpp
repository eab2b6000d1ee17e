// RunConfig: one search run as the experimenter wrote it in YAML.
//
// The config is made of sections, each with its own struct, parser and
// validation in config/ (search, llm, evaluation, agents, coordinator), so
// that a new key lands in the file of its section. This file holds only what
// belongs to the run as a whole (name, workloads, seeds) and the list of
// sections.
//
// load_run_config() validates everything up front so that a typo fails in the
// first second, naming the file and the key, instead of an hour into a sweep.
// Unknown and duplicate keys are errors for the same reason (ConfigReader).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "config/agents_config.hpp"
#include "config/config_reader.hpp"
#include "config/context_config.hpp"
#include "config/coordinator_config.hpp"
#include "config/evaluation_config.hpp"
#include "config/llm_config.hpp"
#include "config/search_config.hpp"

namespace palladium {

struct RunConfig {
  std::string name;
  std::vector<std::string> workloads;  // JAXBench ids, distinct, in report order
  std::vector<uint64_t> seeds{0};      // one search per workload per seed; distinct

  SearchConfig search;
  LlmConfig llm;
  ContextConfig context;
  EvaluationConfig evaluation;
  AgentsConfig agents;
  CoordinatorConfig coordinator;

  // The YAML as read, with the judge settings' defaults filled in (fill_judge_settings):
  // stored with the run, hashed for resume.
  std::string text;
};

// Parses and validates YAML text; `origin` names the source in error messages.
// Pure: touches no file. Throws ConfigError.
RunConfig parse_run_config(const std::string& yaml_text, const std::string& origin);

// Reads and parses a file. Throws ConfigError if it cannot be read or is invalid.
RunConfig load_run_config(const std::string& path);

// Checks the files a valid config refers to (workload modules, the replay
// corpus) under `home`, before anything is started or stored. Throws
// ConfigError naming `origin`, the key and the missing path.
void check_run_config_files(const RunConfig& config, const std::string& origin,
                            const std::filesystem::path& home);

}  // namespace palladium
