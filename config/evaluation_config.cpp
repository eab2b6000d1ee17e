#include "config/evaluation_config.hpp"

#include <string>
#include <vector>

namespace palladium {

EvaluationConfig parse_evaluation_config(const ConfigReader& r, const YAML::Node& node) {
  EvaluationConfig c;
  if (!node) return c;
  r.check_keys(node, "evaluation",
               {"backend", "timeout_s", "input_seeds", "require_pallas", "recheck_share",
                "speedup_ceiling", "compile_tier", "full_shapes"});
  r.get(node, "backend", "evaluation.backend", c.backend);
  r.get_number(node, "timeout_s", "evaluation.timeout_s", c.timeout_s, 0, kMaxTimeoutS);
  r.get_distinct(node, "input_seeds", "evaluation.input_seeds", c.input_seeds);
  r.get(node, "require_pallas", "evaluation.require_pallas", c.require_pallas);
  r.get_number(node, "recheck_share", "evaluation.recheck_share", c.recheck_share, 0, 1);
  r.get_number(node, "speedup_ceiling", "evaluation.speedup_ceiling", c.speedup_ceiling, 1,
               1e9);
  if (!(c.speedup_ceiling > 1)) r.fail("evaluation.speedup_ceiling", "must be > 1");
  if (c.backend != "interpret" && c.backend != "tpu")
    r.fail("evaluation.backend", "must be 'interpret' or 'tpu', not '" + c.backend + "'");
  if (!(c.timeout_s > 0)) r.fail("evaluation.timeout_s", "must be > 0");
  if (c.input_seeds.empty()) r.fail("evaluation.input_seeds", "must list at least one seed");
  r.get(node, "compile_tier", "evaluation.compile_tier", c.judge.compile_tier);
  if (c.judge.compile_tier != "on" && c.judge.compile_tier != "off")
    r.fail("evaluation.compile_tier",
           "must be 'on' or 'off', not '" + c.judge.compile_tier + "'");
  r.get(node, "full_shapes", "evaluation.full_shapes", c.judge.full_shapes);
  return c;
}

}  // namespace palladium

namespace palladium {
namespace {

// The judge settings' keys and their defaults, as the stored text spells them.
struct JudgeKey {
  const char* key;
  const char* text;
  YAML::Node value() const {
    return std::string(text) == "false" ? YAML::Node(false) : YAML::Node(text);
  }
};
constexpr JudgeKey kJudgeKeys[] = {{"compile_tier", "on"}, {"full_shapes", "false"}};

// The offset where 0-based line `line` of `text` starts (its end when it has fewer lines).
size_t line_start(const std::string& text, int line) {
  size_t at = 0;
  for (int i = 0; i < line; ++i) {
    at = text.find('\n', at);
    if (at == std::string::npos) return text.size();
    ++at;
  }
  return at;
}

}  // namespace

std::string fill_judge_settings(const std::string& yaml_text, const YAML::Node& root) {
  const YAML::Node evaluation = root["evaluation"];
  std::vector<const JudgeKey*> missing;
  for (const auto& k : kJudgeKeys)
    if (!evaluation || !evaluation.IsMap() || !evaluation[k.key]) missing.push_back(&k);
  if (missing.empty()) return yaml_text;
  auto lines = [&](const std::string& indent) {
    std::string out;
    for (const JudgeKey* k : missing) out += indent + k->key + ": " + k->text + "\n";
    return out;
  };
  if (root.Style() != YAML::EmitterStyle::Flow) {
    if (!evaluation) {
      std::string out = yaml_text;
      if (!out.empty() && out.back() != '\n') out += '\n';
      return out + "evaluation:\n" + lines("  ");
    }
    if (evaluation.IsMap() && evaluation.Style() != YAML::EmitterStyle::Flow &&
        evaluation.size() > 0) {
      // Before the map's first key, at its column: the lines and comments around it stay.
      YAML::Mark first = evaluation.begin()->first.Mark();
      std::string out = yaml_text;
      std::string indent(static_cast<size_t>(first.column), ' ');
      out.insert(line_start(out, first.line), lines(indent));
      return out;
    }
  }
  // A flow-style or empty evaluation map: re-emitted with the keys (its comments are lost).
  YAML::Node copy = YAML::Clone(root);
  if (!copy["evaluation"].IsMap()) copy["evaluation"] = YAML::Node(YAML::NodeType::Map);
  for (const JudgeKey* k : missing) copy["evaluation"][k->key] = k->value();
  return YAML::Dump(copy) + "\n";
}

}  // namespace palladium
