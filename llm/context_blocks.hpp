// The context blocks of the "iterative + context" method, and the strategy
// menus, read from workloads/context/.
//
// Layout (workloads/context/README.md):
//   blocks.yaml          the four blocks (hardware, api, examples, rules), each a
//                        list of sections {file, tags, kind: text|code}
//   workload_tags.yaml   workload id -> tags (matmul, attention, ...)
//   menus/<name>.yaml    a strategy menu (written by the search side)
//
// A section is selected for a workload when its tags contain `all` or share a
// tag with the workload. assemble() joins the selected sections of the
// requested blocks, in manifest order, each block under the heading
// context_block_heading(name, title), code sections in ```python fences.
//
// Token sizes are estimate_tokens() (llm/token_estimate.hpp: ceil(bytes/4)).
//
// Errors: load() throws ContextError naming the file and what is wrong (a
// missing file, a YAML error, an unknown tag, a section file that does not
// exist). assemble() throws ContextError for an unknown block name or a
// workload without tags. load_menu() throws ContextError naming the menu file.
//
// A ContextLibrary is immutable after load(); const methods are safe to call
// from several threads.

#ifndef PALLADIUM_LLM_CONTEXT_BLOCKS_HPP_
#define PALLADIUM_LLM_CONTEXT_BLOCKS_HPP_

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace palladium {

class ContextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The block names in their canonical order (the order of blocks.yaml).
const std::vector<std::string>& context_block_names();

// "## Context (<name>): <title>": the line that opens a block in a prompt.
// The synthetic model (llm/synthetic_model.hpp) detects blocks by it.
std::string context_block_heading(std::string_view name, std::string_view title);

// Names of the blocks whose heading occurs in `prompt_text`, in canonical order.
std::vector<std::string> context_blocks_in(std::string_view prompt_text);

struct ContextSection {
  std::string file;               // relative to the context directory
  std::vector<std::string> tags;  // "all" or tags of workload_tags.yaml
  bool code = false;              // shown in a ```python fence
  std::string text;
};

struct ContextBlock {
  std::string name;   // hardware, api, examples, rules
  std::string title;  // as the heading shows it
  std::vector<ContextSection> sections;
};

// One block as assembled for a workload.
struct AssembledBlock {
  std::string name;
  std::vector<std::string> files;  // the sections chosen, in order
  std::string text;                // heading included
  int tokens = 0;                  // estimate_tokens(text.size())
};

struct AssembledContext {
  std::vector<AssembledBlock> blocks;  // in canonical order
  std::string text;                    // every block's text, joined
  int tokens() const;                  // estimate of the whole text
};

class ContextLibrary {
 public:
  // Reads blocks.yaml, workload_tags.yaml and every section file under
  // `context_dir`. Throws ContextError.
  static ContextLibrary load(const std::filesystem::path& context_dir);

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<ContextBlock>& blocks() const { return blocks_; }
  const std::map<std::string, std::vector<std::string>>& workload_tags() const {
    return workload_tags_;
  }

  // The requested blocks (any order, no duplicates; each one of
  // context_block_names()) for `workload_id`. An empty list gives an empty
  // context. Throws ContextError.
  AssembledContext assemble(const std::string& workload_id,
                            const std::vector<std::string>& block_names) const;

 private:
  std::filesystem::path dir_;
  std::vector<ContextBlock> blocks_;
  std::map<std::string, std::vector<std::string>> workload_tags_;
};

// The strategies of menus/<name>.yaml under `context_dir`, one string each,
// in file order. The file is either a YAML list, or a mapping whose one key
// (for example `strategies` or `optimizations`) holds the list; an item is a
// string or a mapping {strategy: string} (Autocomp's menu files). `name` is a
// file stem: no path separators. Throws ContextError.
std::vector<std::string> load_menu(const std::filesystem::path& context_dir,
                                   const std::string& name);

// Checks a config's `context.blocks` list: each a known block, none twice.
// Returns "" when valid, else what is wrong (for the config error message).
std::string check_block_names(const std::vector<std::string>& names);

}  // namespace palladium

#endif  // PALLADIUM_LLM_CONTEXT_BLOCKS_HPP_
