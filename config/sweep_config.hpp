// SweepConfig: a grid of run configs, as the experimenter wrote it in YAML,
// expanded into cells by pure code.
//
// YAML:
//   name: offline-study
//   base: ../quickstart.yaml      # a run config file (relative to this file), or
//   run: {...}                    # an inline run config; exactly one of the two
//   grid:                         # axes, expanded as a product in the order written
//     method: [iterative, iterative_context]
//     budget_per_workload: [3, 6]
//     seed: [0, 1]                # sets seeds: [s]; bands over seeds come from this
//     llm.model: [a, b]           # any run-config key, by its dotted path
//     workloads:                  # a mapping names each point (needed for lists)
//       quick: [8p, 12p]
//       priority: [1p, 8p]
//   concurrency: 2                # cells run at once (default 1)
//   order: grid                   # or cheap_first
//
// Cells. Each point of the product is a cell: the base config with the
// point's values set at their paths, validated as a whole run config (an
// invalid point fails the sweep up front, naming the cell). A cell's key is
// "axis=label,axis=label" in axis order (labels are the scalar values or the
// point names): stable as long as the axes and labels are, so a rerun of the
// sweep finds its cells again. Axes may not vary what the cells share: the
// agents, the coordinator, the evaluation backend, the run name.
//
// Order. `grid` runs cells in product order. `cheap_first` runs first the
// cell that shows a level of some axis no earlier cell has shown (most new
// levels first), then the cheapest (budget x workloads x seeds), then product
// order: after the first few cells every level of every axis has been seen
// once, at the lowest cost, so an early look at the sweep is informative.
//
// Identity. `text` is a canonical rendering of name, base (resolved and
// inlined) and grid, without comments or the scheduling keys (concurrency,
// order): the store finds a sweep by it, so editing a comment or the
// concurrency resumes the same sweep.
//
// Errors: ConfigError naming the file and key (config/config_reader.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/run_config.hpp"

namespace palladium {

struct SweepCell {
  std::string key;  // "method=iterative,seed=0"
  int ordinal = 0;  // position in product order
  std::vector<std::pair<std::string, std::string>> params;  // axis -> label
  std::string params_json;  // {"axis": "label", ...}
  RunConfig config;         // validated; config.text is the cell's canonical YAML
  long cost = 0;            // candidates it may spend: budget x workloads x seeds
};

struct SweepConfig {
  enum class Order { grid, cheap_first };

  std::string name;
  std::string text;  // canonical identity text (see above)
  RunConfig base;    // the shared sections (agents, coordinator) come from here
  std::vector<std::string> axes;  // paths, in grid order
  int concurrency = 1;
  Order order = Order::grid;
  std::vector<SweepCell> cells;  // in run order
};

// Parses, expands and validates. `origin` names the source in messages;
// a `base:` path is read relative to `base_dir`. Throws ConfigError.
SweepConfig parse_sweep_config(const std::string& yaml_text, const std::string& origin,
                               const std::string& base_dir);

// Reads a sweep file. Throws ConfigError.
SweepConfig load_sweep_config(const std::string& path);

// The cheap_first permutation of `cells` (indices), as described above.
std::vector<size_t> cheap_first_order(const std::vector<SweepCell>& cells);

}  // namespace palladium
