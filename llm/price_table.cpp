#include "llm/price_table.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace palladium {

PriceTable PriceTable::parse(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw PriceTableError(origin + ": YAML syntax error at line " +
                          std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap() || !root["prices"] || !root["prices"].IsSequence())
    throw PriceTableError(origin + ": expected a top-level 'prices:' list");
  static const std::set<std::string> kKeys = {"provider",
                                              "model",
                                              "input_per_mtok",
                                              "output_per_mtok",
                                              "batch_input_per_mtok",
                                              "batch_output_per_mtok",
                                              "cached_input_per_mtok",
                                              "cached_as_of",
                                              "cached_source",
                                              "as_of",
                                              "source"};
  PriceTable table;
  int i = 0;
  for (const auto& node : root["prices"]) {
    const std::string where = origin + ": prices[" + std::to_string(i++) + "]";
    if (!node.IsMap()) throw PriceTableError(where + ": expected a mapping");
    for (const auto& kv : node) {
      const auto key = kv.first.as<std::string>();
      if (!kKeys.count(key)) throw PriceTableError(where + "." + key + ": unknown key");
    }
    auto text = [&](const char* key) {
      if (!node[key]) throw PriceTableError(where + "." + key + ": is required");
      auto v = node[key].as<std::string>();
      if (v.empty()) throw PriceTableError(where + "." + key + ": must not be empty");
      return v;
    };
    auto number = [&](const char* key) -> std::optional<double> {
      if (!node[key]) return std::nullopt;
      double v;
      try {
        v = node[key].as<double>();
      } catch (const YAML::Exception&) {
        throw PriceTableError(where + "." + key + ": must be a number");
      }
      if (!(v >= 0) || v > 1e6) throw PriceTableError(where + "." + key + ": must be >= 0");
      return v;
    };
    Entry e;
    e.provider = text("provider");
    e.model = text("model");
    auto in = number("input_per_mtok"), out = number("output_per_mtok");
    if (!in || !out)
      throw PriceTableError(where + ": input_per_mtok and output_per_mtok are required");
    e.price.input_per_mtok = *in;
    e.price.output_per_mtok = *out;
    e.price.batch_input_per_mtok = number("batch_input_per_mtok");
    e.price.batch_output_per_mtok = number("batch_output_per_mtok");
    e.price.cached_input_per_mtok = number("cached_input_per_mtok");
    // A cached price read later than the rest says so: its own date and source, required.
    if (e.price.cached_input_per_mtok) {
      e.price.cached_as_of = text("cached_as_of");
      e.price.cached_source = text("cached_source");
    } else if (node["cached_as_of"] || node["cached_source"]) {
      throw PriceTableError(where + ": cached_as_of/cached_source without cached_input_per_mtok");
    }
    e.price.as_of = text("as_of");
    e.price.source = text("source");
    table.entries_.push_back(std::move(e));
  }
  return table;
}

PriceTable PriceTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PriceTableError(path + ": cannot read the price table");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

std::optional<Price> PriceTable::find(const std::string& provider,
                                      const std::string& model) const {
  const Entry* best = nullptr;
  size_t best_len = 0;
  for (const auto& e : entries_) {
    if (e.provider != provider) continue;
    if (e.model == model) return e.price;
    if (!e.model.empty() && e.model.back() == '*') {
      const std::string prefix = e.model.substr(0, e.model.size() - 1);
      if (model.compare(0, prefix.size(), prefix) == 0 && prefix.size() + 1 > best_len) {
        best = &e;
        best_len = prefix.size() + 1;
      }
    }
  }
  if (best) return best->price;
  return std::nullopt;
}

double cost_usd(const Price& price, const Usage& usage, bool batch) {
  const double in = batch && price.batch_input_per_mtok ? *price.batch_input_per_mtok
                                                        : price.input_per_mtok;
  const double out = batch && price.batch_output_per_mtok ? *price.batch_output_per_mtok
                                                          : price.output_per_mtok;
  double cached_in = in;
  if (price.cached_input_per_mtok) {
    cached_in = *price.cached_input_per_mtok;
    if (batch && price.batch_input_per_mtok && price.input_per_mtok > 0)
      cached_in *= *price.batch_input_per_mtok / price.input_per_mtok;
  }
  const int64_t cached = std::min(std::max<int64_t>(usage.cached_prompt_tokens, 0),
                                  usage.prompt_tokens);
  return (static_cast<double>(usage.prompt_tokens - cached) * in +
          static_cast<double>(cached) * cached_in +
          static_cast<double>(usage.output_tokens()) * out) /
         1e6;
}

double cache_savings_usd(const Price& price, const Usage& usage, bool batch) {
  Usage uncached = usage;
  uncached.cached_prompt_tokens = 0;
  return cost_usd(price, uncached, batch) - cost_usd(price, usage, batch);
}

}  // namespace palladium
