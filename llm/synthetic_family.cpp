#include "llm/synthetic_family.hpp"

#include <algorithm>
#include <functional>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

#include "llm/yaml_file.hpp"

namespace palladium {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw FamilyError(file.string() + ": " + what);
}

std::string read_text(const fs::path& file) { return read_text_file<FamilyError>(file); }

YAML::Node read_yaml(const fs::path& file) { return read_yaml_file<FamilyError>(file); }

std::string scalar(const YAML::Node& node, const fs::path& file, const std::string& where) {
  if (!node || !node.IsScalar()) fail(file, where + ": expected a string");
  return node.as<std::string>();
}

// Replaces every {{name}} of `vars` in `text`.
std::string substitute(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [name, value] : vars) {
    const std::string key = "{{" + name + "}}";
    for (size_t pos = text.find(key); pos != std::string::npos;
         pos = text.find(key, pos + value.size())) {
      text.replace(pos, key.size(), value);
    }
  }
  return text;
}

// Replaces every occurrence; returns how many there were.
size_t replace_all(std::string& text, const std::string& find, const std::string& replace) {
  size_t n = 0;
  for (size_t pos = text.find(find); pos != std::string::npos;
       pos = text.find(find, pos + replace.size())) {
    text.replace(pos, find.size(), replace);
    ++n;
  }
  return n;
}

Slip parse_slip(const std::string& s, const fs::path& file, const std::string& where) {
  if (s == "api") return Slip::api;
  if (s == "tiling") return Slip::tiling;
  if (s == "logic") return Slip::logic;
  if (s == "loop") return Slip::loop;
  fail(file, where + ": slip must be api, tiling, logic or loop, not '" + s + "'");
}

std::vector<int> int_list(const YAML::Node& node, const fs::path& file, const std::string& where) {
  if (!node || !node.IsSequence() || node.size() == 0) fail(file, where + ": expected a list of ints");
  std::vector<int> out;
  for (const auto& v : node) {
    try {
      out.push_back(v.as<int>());
    } catch (const YAML::Exception&) {
      fail(file, where + ": expected a list of ints");
    }
  }
  return out;
}

Mistake parse_mistake(const YAML::Node& m, const fs::path& file, const std::string& where,
                      const std::map<std::string, std::string>& vars) {
  if (!m.IsMap()) fail(file, where + ": expected a mapping");
  Mistake out;
  out.id = scalar(m["id"], file, where + ".id");
  out.slip = parse_slip(scalar(m["slip"], file, where + ".slip"), file, where + ".slip");
  if (m["templates"]) {
    for (const auto& t : m["templates"]) out.templates.push_back(t.as<std::string>());
  }
  const YAML::Node patches = m["patch"];
  if (!patches || !patches.IsSequence() || patches.size() == 0) {
    fail(file, where + ".patch: expected a non-empty list");
  }
  for (size_t i = 0; i < patches.size(); ++i) {
    const std::string pw = where + ".patch[" + std::to_string(i) + "]";
    Patch p;
    p.find = substitute(scalar(patches[i]["find"], file, pw + ".find"), vars);
    p.replace = substitute(scalar(patches[i]["replace"], file, pw + ".replace"), vars);
    // identify() recognises a mistake by its replacement text, so it must be there to see.
    if (p.find.empty() || p.replace.empty()) fail(file, pw + ": find and replace must not be empty");
    out.patches.push_back(std::move(p));
  }
  return out;
}

}  // namespace

const char* to_string(Slip s) {
  switch (s) {
    case Slip::api: return "api";
    case Slip::tiling: return "tiling";
    case Slip::logic: return "logic";
    case Slip::loop: return "loop";
  }
  return "?";
}

std::string Variant::describe() const {
  std::string out = tmpl;
  for (const auto& [k, v] : params) out += " " + k + "=" + std::to_string(v);
  for (const auto& m : mistakes) out += " +" + m;
  return out;
}

KernelFamily KernelFamily::load(const fs::path& dir, const std::string& workload_id) {
  if (workload_id.empty() || workload_id.find('/') != std::string::npos ||
      workload_id.find("..") != std::string::npos) {
    throw FamilyError("synthetic: '" + workload_id + "' is not a workload id");
  }
  const fs::path ffile = dir / "families" / (workload_id + ".yaml");
  const YAML::Node root = read_yaml(ffile);
  if (!root.IsMap()) fail(ffile, "expected a mapping");
  KernelFamily fam;
  fam.workload_ = scalar(root["workload"], ffile, "workload");
  if (fam.workload_ != workload_id) fail(ffile, "workload: expected '" + workload_id + "'");

  std::map<std::string, std::string> vars;
  if (root["vars"]) {
    if (!root["vars"].IsMap()) fail(ffile, "vars: expected a mapping");
    for (const auto& kv : root["vars"]) {
      vars[kv.first.as<std::string>()] = kv.second.IsNull() ? "" : kv.second.as<std::string>();
    }
  }
  const YAML::Node tlist = root["templates"];
  if (!tlist || !tlist.IsSequence() || tlist.size() == 0) {
    fail(ffile, "templates: expected a non-empty list");
  }
  for (size_t i = 0; i < tlist.size(); ++i) {
    const std::string where = "templates[" + std::to_string(i) + "]";
    KernelTemplate t;
    t.name = scalar(tlist[i]["name"], ffile, where + ".name");
    t.weight = tlist[i]["weight"] ? tlist[i]["weight"].as<double>() : 1.0;
    if (!(t.weight > 0)) fail(ffile, where + ".weight: must be > 0");
    const fs::path tfile = dir / "templates" / (t.name + ".yaml");
    const YAML::Node spec = read_yaml(tfile);
    t.signature = scalar(spec["signature"], tfile, "signature");
    t.text = substitute(read_text(dir / "templates" / (t.name + ".py.tmpl")), vars);
    const YAML::Node params = spec["params"];
    if (!params || !params.IsMap()) fail(tfile, "params: expected a mapping");
    for (const auto& kv : params) {
      ParamSpec p;
      p.name = kv.first.as<std::string>();
      p.values = int_list(kv.second["values"], tfile, "params." + p.name + ".values");
      p.first = int_list(kv.second["first"], tfile, "params." + p.name + ".first");
      if (!std::is_sorted(p.values.begin(), p.values.end())) {
        fail(tfile, "params." + p.name + ".values: must be ascending");
      }
      for (int f : p.first) {
        if (std::find(p.values.begin(), p.values.end(), f) == p.values.end()) {
          fail(tfile, "params." + p.name + ".first: " + std::to_string(f) + " is not in values");
        }
      }
      if (("\n" + t.text).find("\n" + p.name + " = {{" + p.name + "}}\n") == std::string::npos) {
        fail(tfile, "params." + p.name + ": the template has no line '" + p.name + " = {{" +
                        p.name + "}}'");
      }
      t.params.push_back(std::move(p));
    }
    // A family may start elsewhere than the template's default first attempts (large shapes
    // where the smallest tiles would be needlessly slow to check).
    if (const YAML::Node over = tlist[i]["first"]) {
      if (!over.IsMap()) fail(ffile, where + ".first: expected a mapping");
      for (const auto& kv : over) {
        const std::string name = kv.first.as<std::string>();
        auto it = std::find_if(t.params.begin(), t.params.end(),
                               [&](const ParamSpec& p) { return p.name == name; });
        if (it == t.params.end()) fail(ffile, where + ".first: " + t.name + " has no " + name);
        it->first = int_list(kv.second, ffile, where + ".first." + name);
        for (int f : it->first) {
          if (std::find(it->values.begin(), it->values.end(), f) == it->values.end()) {
            fail(ffile, where + ".first." + name + ": " + std::to_string(f) + " is not in values");
          }
        }
      }
    }
    if (spec["prose"]) {
      for (const auto& p : spec["prose"]) t.prose.push_back(p.as<std::string>());
    }
    if (t.prose.empty()) fail(tfile, "prose: expected at least one explanation");
    if (t.text.find(t.signature) == std::string::npos) {
      fail(tfile, "signature: not found in the template");
    }
    if (spec["mistakes"]) {
      for (size_t m = 0; m < spec["mistakes"].size(); ++m) {
        Mistake mk = parse_mistake(spec["mistakes"][m], tfile,
                                   "mistakes[" + std::to_string(m) + "]", vars);
        if (!mk.templates.empty()) fail(tfile, "a template's mistakes apply to it alone");
        mk.templates = {t.name};
        fam.mistakes_.push_back(std::move(mk));
      }
    }
    fam.templates_.push_back(std::move(t));
  }
  if (root["mistakes"]) {
    for (size_t m = 0; m < root["mistakes"].size(); ++m) {
      const std::string where = "mistakes[" + std::to_string(m) + "]";
      Mistake mk = parse_mistake(root["mistakes"][m], ffile, where, vars);
      if (mk.templates.empty()) fail(ffile, where + ".templates: name the templates");
      for (const auto& t : mk.templates) {
        if (!fam.find_template(t)) fail(ffile, where + ".templates: no template '" + t + "'");
      }
      fam.mistakes_.push_back(std::move(mk));
    }
  }
  std::set<std::string> ids;
  for (const auto& m : fam.mistakes_) {
    // A mistake id names one slip; two templates may share an id only if both are that slip.
    if (!ids.insert(m.id + "@" + m.templates.front()).second) {
      fail(ffile, "mistake '" + m.id + "' is defined twice for template " + m.templates.front());
    }
  }
  std::set<std::string> sigs;
  for (const auto& t : fam.templates_) {
    if (!sigs.insert(t.signature).second) fail(ffile, "two templates share a signature");
  }
  if (root["questions"]) {
    for (const auto& q : root["questions"]) fam.questions_.push_back(q.as<std::string>());
  }
  if (fam.questions_.empty()) fail(ffile, "questions: expected at least one");
  return fam;
}

const KernelTemplate* KernelFamily::find_template(std::string_view name) const {
  for (const auto& t : templates_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const Mistake* KernelFamily::find_mistake(std::string_view id) const {
  for (const auto& m : mistakes_) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

std::vector<const Mistake*> KernelFamily::mistakes_for(std::string_view tmpl) const {
  std::vector<const Mistake*> out;
  for (const auto& m : mistakes_) {
    if (std::find(m.templates.begin(), m.templates.end(), tmpl) != m.templates.end()) {
      out.push_back(&m);
    }
  }
  return out;
}

namespace {

const Mistake* mistake_of(const KernelFamily& fam, const std::string& tmpl, const std::string& id) {
  for (const Mistake* m : fam.mistakes_for(tmpl)) {
    if (m->id == id) return m;
  }
  return nullptr;
}

}  // namespace

std::string KernelFamily::render(const Variant& v) const {
  const KernelTemplate* t = find_template(v.tmpl);
  if (!t) throw FamilyError("synthetic " + workload_ + ": no template '" + v.tmpl + "'");
  std::map<std::string, std::string> values;
  for (const auto& p : t->params) {
    auto it = v.params.find(p.name);
    if (it == v.params.end()) {
      throw FamilyError("synthetic " + workload_ + ": " + v.tmpl + " needs " + p.name);
    }
    values[p.name] = std::to_string(it->second);
  }
  std::string code = substitute(t->text, values);
  for (const auto& id : v.mistakes) {
    const Mistake* m = mistake_of(*this, v.tmpl, id);
    if (!m) throw FamilyError("synthetic " + workload_ + ": no mistake '" + id + "' for " + v.tmpl);
    for (const auto& p : m->patches) {
      if (replace_all(code, p.find, p.replace) == 0) {
        throw FamilyError("synthetic " + workload_ + ": mistake '" + id + "' does not apply to " +
                          v.describe());
      }
    }
  }
  return code;
}

bool KernelFamily::renders(const Variant& v) const {
  try {
    render(v);
    return true;
  } catch (const FamilyError&) {
    return false;
  }
}

std::string KernelFamily::prose(const Variant& v, size_t pick) const {
  const KernelTemplate* t = find_template(v.tmpl);
  if (!t) return "";
  std::map<std::string, std::string> values;
  for (const auto& [k, val] : v.params) values[k] = std::to_string(val);
  return substitute(t->prose[pick % t->prose.size()], values);
}

std::optional<Variant> KernelFamily::identify(std::string_view code_view) const {
  const std::string code(code_view);
  for (const auto& t : templates_) {
    if (code.find(t.signature) == std::string::npos) continue;
    Variant v;
    v.tmpl = t.name;
    for (const auto& p : t.params) {
      std::smatch m;
      const std::regex re("(^|\n)" + p.name + " = ([0-9]+)[ \t]*(\n|$)");
      if (!std::regex_search(code, m, re)) return std::nullopt;
      v.params[p.name] = std::stoi(m[2].str());
    }
    for (const Mistake* mk : mistakes_for(t.name)) {
      bool present = true;
      for (const auto& p : mk->patches) {
        present = code.find(p.replace) != std::string::npos;
        if (!present) break;
      }
      if (present) v.mistakes.push_back(mk->id);
    }
    return v;
  }
  return std::nullopt;
}

std::vector<std::string> synthetic_workloads(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "families", ec)) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Every combination of `choose(param)` values for template t.
std::vector<Variant> tilings(const KernelTemplate& t,
                             const std::function<std::vector<int>(const ParamSpec&)>& choose) {
  std::vector<Variant> out{Variant{t.name, {}, {}}};
  for (const auto& p : t.params) {
    std::vector<Variant> next;
    for (const auto& v : out) {
      for (int value : choose(p)) {
        Variant w = v;
        w.params[p.name] = value;
        next.push_back(std::move(w));
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<Variant> listed_variants(const KernelFamily& family, bool all_tilings) {
  std::vector<Variant> out;
  for (const auto& t : family.templates()) {
    for (auto& v : tilings(t, [&](const ParamSpec& p) { return all_tilings ? p.values : p.first; }))
      out.push_back(std::move(v));
    Variant smallest =
        tilings(t, [](const ParamSpec& p) { return std::vector<int>{p.first.front()}; }).front();
    for (const Mistake* m : family.mistakes_for(t.name)) {
      Variant v = smallest;
      v.mistakes = {m->id};
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace palladium
