// `palladium bench store`: the run store's cost per candidate under several
// write configurations, measured side by side in one process and printed as
// a table plus ratios against v1's way of writing (every write its own
// fsynced transaction, every statement prepared again).
//
// Each configuration gets a fresh database in --dir (default: the system
// temp directory), removed afterwards. Exit status 0, or 1 if any simulated
// search got an error from the store, 2 for bad usage.
#pragma once

#include <string>
#include <vector>

namespace palladium {

int bench_store_command(const std::vector<std::string>& args);

}  // namespace palladium
