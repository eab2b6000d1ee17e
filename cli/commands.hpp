// The palladium subcommands. Each takes the arguments after its name and
// returns the process exit status: 0 success, 1 the work ran but did not
// succeed (for example an incomplete run), 2 bad usage or input.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace palladium {

int run_command(const std::vector<std::string>& args);
int agent_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);
int context_command(const std::vector<std::string>& args);
int keys_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int synthetic_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int policy_eval_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int status_command(const std::vector<std::string>& args);
int plan_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);

// Where workloads/, judge/ and llm/replay_corpus/ live:
// $PALLADIUM_HOME, else the source tree this binary was built from.
std::filesystem::path palladium_home();

}  // namespace palladium
