// `palladium bench dispatch`: the coordinator's dispatch path under a simulated fleet
// (bench/bench_dispatch.cpp says what it measures and prints).
#pragma once

#include <string>
#include <vector>

namespace palladium {

// `args` follow "dispatch".
int bench_dispatch_command(const std::vector<std::string>& args);

}  // namespace palladium
