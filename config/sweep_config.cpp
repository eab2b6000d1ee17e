#include "config/sweep_config.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;

namespace palladium {
namespace {

struct Point {
  std::string label;
  YAML::Node value;
};

struct Axis {
  std::string path;
  std::vector<Point> points;
};

std::string read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in || fs::is_directory(path)) throw ConfigError(path + ": cannot read the " + what);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

// What every cell shares, and so no axis may vary.
void check_axis_path(const ConfigReader& r, const std::string& path) {
  static const std::regex path_re("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$");
  if (!std::regex_match(path, path_re))
    r.fail("grid." + path, "is not a dotted config key path");
  for (const char* shared : {"agents", "coordinator", "name", "evaluation.backend"}) {
    const std::string s = shared;
    if (path == s || path.rfind(s + ".", 0) == 0)
      r.fail("grid." + path, "cannot vary across cells: every cell of a sweep shares " + s);
  }
}

Axis parse_axis(const ConfigReader& r, const std::string& path, const YAML::Node& values) {
  static const std::regex label_re("^[A-Za-z0-9_.+-]+$");
  const std::string where = "grid." + path;
  Axis axis{path, {}};
  if (values.IsSequence()) {
    for (const auto& v : values) {
      if (!v.IsScalar())
        r.fail(where, "a list or mapping value needs a name: write " + path +
                          ": {name: value, ...}");
      axis.points.push_back({v.Scalar(), v});
    }
  } else if (values.IsMap()) {
    for (const auto& kv : values) axis.points.push_back({kv.first.as<std::string>(), kv.second});
  } else {
    r.fail(where, "must be a list of values or a mapping of named values");
  }
  if (axis.points.empty()) r.fail(where, "has no values");
  std::set<std::string> seen;
  for (const auto& p : axis.points) {
    if (!std::regex_match(p.label, label_re))
      r.fail(where, "'" + p.label + "' cannot be part of a cell id: use letters, digits and _.+- "
                    "(name the value: " + path + ": {name: value})");
    if (!seen.insert(p.label).second) r.fail(where, "'" + p.label + "' is listed twice");
  }
  return axis;
}

// Sets `value` at dotted `path` in `root`, creating mappings on the way.
void set_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  YAML::Node node = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node[parts[i]] || !node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[parts[i]]);
  }
  node[parts.back()] = YAML::Clone(value);
}

}  // namespace

SweepConfig parse_sweep_config(const std::string& yaml_text, const std::string& origin,
                               const std::string& base_dir) {
  ConfigReader r(origin);
  YAML::Node root = r.load(yaml_text);
  r.check_keys(root, "", {"name", "base", "run", "grid", "concurrency", "order"});
  SweepConfig s;
  r.get(root, "name", "name", s.name);
  if (s.name.empty()) r.fail("name", "is required");
  r.get_int(root, "concurrency", "concurrency", s.concurrency, 1, 64);
  std::string order = "grid";
  r.get(root, "order", "order", order);
  if (order == "cheap_first")
    s.order = SweepConfig::Order::cheap_first;
  else if (order != "grid")
    r.fail("order", "must be 'grid' or 'cheap_first', not '" + order + "'");

  // The base run config, resolved to a mapping.
  YAML::Node base;
  std::string base_origin = origin + " (run)";
  if (root["base"] && root["run"]) r.fail("base", "give either base or run, not both");
  if (auto b = root["base"]) {
    std::string rel;
    r.get(root, "base", "base", rel);
    fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(base_dir) / rel;
    base_origin = p.string();
    std::string base_text = read_text(p.string(), "base run config");
    parse_run_config(base_text, base_origin);  // errors with the file's own line numbers
    base = ConfigReader(base_origin).load(base_text);
  } else if (auto inline_run = root["run"]) {
    base = YAML::Clone(inline_run);
  } else {
    r.fail("base", "is required (or an inline run: mapping)");
  }
  if (!base.IsMap()) r.fail(root["base"] ? "base" : "run", "must be a run config mapping");
  if (!base["name"]) base["name"] = s.name;
  s.base = parse_run_config(emit(base), base_origin);

  std::vector<Axis> axes;
  if (auto grid = root["grid"]) {
    if (!grid.IsMap()) r.fail("grid", "expected a mapping of axis -> values");
    std::set<std::string> seen;
    for (const auto& kv : grid) {
      auto path = kv.first.as<std::string>();
      if (!seen.insert(path).second) r.fail("grid." + path, "is given twice");
      check_axis_path(r, path);
      axes.push_back(parse_axis(r, path, kv.second));
      s.axes.push_back(path);
    }
    if (seen.count("seed") && seen.count("seeds")) r.fail("grid.seed", "give seed or seeds, not both");
  }

  YAML::Node identity(YAML::NodeType::Map);
  identity["name"] = s.name;
  identity["base"] = YAML::Clone(base);
  identity["grid"] = root["grid"] ? YAML::Clone(root["grid"]) : YAML::Node(YAML::NodeType::Map);
  s.text = emit(identity);

  // The product, last axis fastest.
  long total = 1;
  for (const auto& a : axes) {
    total *= static_cast<long>(a.points.size());
    if (total > 10000) r.fail("grid", "expands to more than 10000 cells");
  }
  std::vector<size_t> idx(axes.size(), 0);
  for (long n = 0; n < total; ++n) {
    SweepCell cell;
    cell.ordinal = static_cast<int>(n);
    YAML::Node cfg = YAML::Clone(base);
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (size_t a = 0; a < axes.size(); ++a) {
      const Point& p = axes[a].points[idx[a]];
      cell.params.emplace_back(axes[a].path, p.label);
      cell.key += (cell.key.empty() ? "" : ",") + axes[a].path + "=" + p.label;
      params[axes[a].path] = p.label;
      if (axes[a].path == "seed") {
        YAML::Node seeds(YAML::NodeType::Sequence);
        seeds.push_back(p.value);
        set_path(cfg, "seeds", seeds);
      } else {
        set_path(cfg, axes[a].path, p.value);
      }
    }
    if (cell.key.empty()) cell.key = "all";
    cell.params_json = params.dump();
    cfg["name"] = s.name + "[" + cell.key + "]";
    try {
      cell.config = parse_run_config(emit(cfg), origin + ": cell " + cell.key);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(e.what()) + " (the grid sets this cell's values on the base)");
    }
    const auto& c = cell.config;
    cell.cost = static_cast<long>(c.search.budget_per_workload) * static_cast<long>(c.workloads.size()) *
                static_cast<long>(c.seeds.size());
    s.cells.push_back(std::move(cell));
    for (size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].points.size()) break;
      idx[a] = 0;
    }
  }

  if (s.order == SweepConfig::Order::cheap_first) {
    std::vector<SweepCell> ordered;
    for (size_t i : cheap_first_order(s.cells)) ordered.push_back(s.cells[i]);
    s.cells = std::move(ordered);
  }
  return s;
}

SweepConfig load_sweep_config(const std::string& path) {
  return parse_sweep_config(read_text(path, "sweep config"), path,
                            fs::path(path).parent_path().string());
}

std::vector<size_t> cheap_first_order(const std::vector<SweepCell>& cells) {
  std::vector<size_t> order;
  std::vector<bool> used(cells.size(), false);
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t step = 0; step < cells.size(); ++step) {
    size_t best = cells.size();
    size_t best_new = 0;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (used[i]) continue;
      size_t fresh = 0;
      for (const auto& p : cells[i].params) fresh += seen.count(p) ? 0 : 1;
      bool better = best == cells.size() || fresh > best_new ||
                    (fresh == best_new && cells[i].cost < cells[best].cost) ||
                    (fresh == best_new && cells[i].cost == cells[best].cost &&
                     cells[i].ordinal < cells[best].ordinal);
      if (better) {
        best = i;
        best_new = fresh;
      }
    }
    used[best] = true;
    for (const auto& p : cells[best].params) seen.insert(p);
    order.push_back(best);
  }
  return order;
}

}  // namespace palladium
