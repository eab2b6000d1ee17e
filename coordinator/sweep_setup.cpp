#include "coordinator/sweep_setup.hpp"

#include <yaml-cpp/yaml.h>

#include "config/reference_cell.hpp"
#include "store/run_store.hpp"

namespace palladium {
namespace {

// The llm section of a cell's config, as text: cells with equal sections share a gateway.
std::string llm_key(const std::string& config_text) {
  YAML::Emitter out;
  out << YAML::Load(config_text)["llm"];
  return out.c_str();
}

}  // namespace

PreparedSweep prepare_sweep(const std::string& path, int concurrency, int local_agents,
                            const std::filesystem::path& home) {
  PreparedSweep p;
  p.sweep = load_sweep_config(path);
  if (concurrency > 0) p.sweep.concurrency = concurrency;
  if (local_agents >= 0) p.sweep.base.agents.local = local_agents;
  std::string ref_text = reference_cell_config(p.sweep);
  if (!ref_text.empty()) {
    auto ref = parse_run_config(ref_text, path + ": the reference cell");
    p.cells.push_back({kReferenceCellKey, kReferenceCellParams,
                       static_cast<int>(p.sweep.cells.size()), ref, search_specs(ref, path, home),
                       llm_key(ref.text)});
    p.backends[p.cells.back().llm] = make_llm_backend(ref.llm, path, home);
  }
  for (const auto& cell : p.sweep.cells) {
    const std::string origin = path + ": cell " + cell.key;
    p.cells.push_back({cell.key, cell.params_json, cell.ordinal, cell.config,
                       search_specs(cell.config, origin, home), llm_key(cell.config.text)});
    if (!p.backends.count(p.cells.back().llm))
      p.backends[p.cells.back().llm] = make_llm_backend(cell.config.llm, origin, home);
  }
  return p;
}

int64_t record_sweep(RunStore& store, const PreparedSweep& sweep, std::vector<int64_t>& cell_ids) {
  int64_t sweep_id = store.begin_or_resume_sweep(sweep.sweep.name, sweep.sweep.text);
  cell_ids.clear();
  for (const auto& s : sweep.cells) {
    CellRecord rec;
    rec.sweep_id = sweep_id;
    rec.cell_key = s.key;
    rec.ordinal = s.ordinal;
    rec.params_json = s.params_json;
    rec.config_text = s.config.text;
    cell_ids.push_back(store.put_cell(rec));
  }
  return sweep_id;
}

std::map<std::string, LlmGatewayActor> start_sweep_services(Coordinator& coordinator,
                                                            std::shared_ptr<RunStore> store,
                                                            const PreparedSweep& sweep) {
  auto first = sweep.backends.begin();
  coordinator.start_services(std::move(store), first->second.runner, first->second.options);
  std::map<std::string, LlmGatewayActor> gateways{{first->first, coordinator.llm_gateway()}};
  for (auto it = std::next(first); it != sweep.backends.end(); ++it)
    gateways[it->first] = coordinator.add_llm_gateway(it->second.runner, it->second.options);
  return gateways;
}

SweepPlan sweep_plan(PreparedSweep& sweep, const std::vector<int64_t>& cell_ids,
                     const std::map<std::string, LlmGatewayActor>& gateways, int64_t& sample_cap) {
  SweepPlan plan;
  plan.concurrency = sweep.sweep.concurrency;
  sample_cap = 0;
  for (size_t i = 0; i < sweep.cells.size(); ++i) {
    CellSetup& cell = sweep.cells[i];
    SweepCellPlan c;
    c.cell_id = cell_ids[i];
    c.key = cell.key;
    c.run_name = cell.config.name;
    c.config_text = cell.config.text;
    c.run = run_plan(cell.config, 0, std::move(cell.searches), false);
    c.llm_gateway = gateways.at(cell.llm);
    sample_cap += static_cast<int64_t>(c.run.searches.size()) * c.run.budget_per_search;
    plan.cells.push_back(std::move(c));
  }
  return plan;
}

}  // namespace palladium
