// A kernel family of the offline synthetic model: every kernel it can write
// for one workload.
//
// Files (llm/synthetic/README.md):
//   templates/<t>.py.tmpl   a complete Pallas module with {{PLACEHOLDERS}}: the
//                           family's string vars and the template's integer
//                           tile parameters, each parameter P on a line
//                           `P = {{P}}` of its own
//   templates/<t>.yaml      signature (a text only that template's code has),
//                           params {P: {values, first}}, prose, mistakes
//   families/<id>.yaml      workload, vars, templates [{name, weight, first?}],
//                           extra mistakes, questions (answers without code)
//
// A Variant is (template, one value per parameter, a set of mistakes). A
// mistake is a list of text patches on the rendered module (every occurrence
// of `find` becomes `replace`) with a `slip` naming the kind of slip it is:
// api, tiling, logic or loop. No file says what verdict a variant gets; the
// tests evaluate the rendered code (tests/llm/test_synthetic_families.py).
//
// identify() reads a variant back from code: the template by its signature,
// each parameter from its `P = <int>` line, each mistake by its replacement
// texts (never empty, and never part of the clean module: the tests check),
// so the model recognises its own earlier answers in a prompt.
//
// Errors: load() throws FamilyError naming the file and the problem. render()
// throws FamilyError if a mistake's patch finds nothing to replace (the
// mistakes of a variant conflict) or a parameter is missing.
//
// Immutable after load(); safe to share between threads.

#ifndef PALLADIUM_LLM_SYNTHETIC_FAMILY_HPP_
#define PALLADIUM_LLM_SYNTHETIC_FAMILY_HPP_

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace palladium {

class FamilyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Slip { api, tiling, logic, loop };
const char* to_string(Slip s);

struct ParamSpec {
  std::string name;
  std::vector<int> values;  // ascending: the neighbours of a value are next to it
  std::vector<int> first;   // what a first attempt picks from
};

struct Patch {
  std::string find;
  std::string replace;
};

struct Mistake {
  std::string id;
  Slip slip = Slip::api;
  std::vector<std::string> templates;  // the templates it applies to
  std::vector<Patch> patches;
};

struct KernelTemplate {
  std::string name;
  std::string signature;
  std::string text;  // family vars substituted; parameters still {{P}}
  std::vector<ParamSpec> params;
  std::vector<std::string> prose;  // explanations, with {{P}} placeholders
  double weight = 1.0;             // how often a first attempt uses it
};

struct Variant {
  std::string tmpl;
  std::map<std::string, int> params;
  std::vector<std::string> mistakes;  // ids, in the family's mistake order

  bool operator==(const Variant& o) const {
    return tmpl == o.tmpl && params == o.params && mistakes == o.mistakes;
  }
  // "gemm_ktiled BLOCK_K=128 BLOCK_M=256 BLOCK_N=256 +reset_on_n_axis"
  std::string describe() const;
};

class KernelFamily {
 public:
  // Reads families/<workload_id>.yaml and the templates it names under
  // `synthetic_dir`. Throws FamilyError.
  static KernelFamily load(const std::filesystem::path& synthetic_dir,
                           const std::string& workload_id);

  const std::string& workload() const { return workload_; }
  const std::vector<KernelTemplate>& templates() const { return templates_; }
  const KernelTemplate* find_template(std::string_view name) const;
  const std::vector<Mistake>& mistakes() const { return mistakes_; }
  const Mistake* find_mistake(std::string_view id) const;
  // The mistakes that apply to template `tmpl`, in family order.
  std::vector<const Mistake*> mistakes_for(std::string_view tmpl) const;
  const std::vector<std::string>& questions() const { return questions_; }

  // The module text of `v`. Throws FamilyError.
  std::string render(const Variant& v) const;
  // True when render(v) would succeed.
  bool renders(const Variant& v) const;
  // The template's prose number `pick % size` with v's parameters filled in.
  std::string prose(const Variant& v, size_t pick) const;
  // The variant `code` is, or nullopt when it is not this family's code.
  std::optional<Variant> identify(std::string_view code) const;

 private:
  std::string workload_;
  std::vector<KernelTemplate> templates_;
  std::vector<Mistake> mistakes_;
  std::vector<std::string> questions_;
};

// The variants `palladium synthetic variants` lists: each template at its first-attempt tilings
// (every tiling when `all_tilings`), clean, then with each of its mistakes alone at its
// smallest first-attempt tiling.
std::vector<Variant> listed_variants(const KernelFamily& family, bool all_tilings);

// The workload ids that have a family under `synthetic_dir`, sorted.
std::vector<std::string> synthetic_workloads(const std::filesystem::path& synthetic_dir);

}  // namespace palladium

#endif  // PALLADIUM_LLM_SYNTHETIC_FAMILY_HPP_
