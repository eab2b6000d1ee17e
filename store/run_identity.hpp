// What a run is, as reports name it: its method, its model label and its suite, read from its
// config text once, when the run (or sweep cell) is stored, so that no report parses the stored
// YAML again. A database from before schema version 3 gets them from the same reading when it
// is migrated (store/database.hpp).

#ifndef PALLADIUM_STORE_RUN_IDENTITY_HPP_
#define PALLADIUM_STORE_RUN_IDENTITY_HPP_

#include <string>
#include <utility>
#include <vector>

namespace palladium {

struct RunIdentity {
  // The config's `method` (default "iterative"); "unknown" when the text is not YAML.
  std::string method;
  // "replay", "synthetic" or "hand_tuned" for those providers, else llm.model (the provider's
  // name when it has none); the default provider is replay; "unknown" when the text is not YAML.
  std::string model;
  // The config's `workloads`, as written; empty when it has no readable list.
  std::vector<std::string> suite;
};

// Never throws: a config that cannot be read gives what the fields above say.
RunIdentity run_identity(const std::string& config_text);

// Fills a run's or cell's record (method, model, suite) from its config_text.
template <typename Record>
void identify(Record& record) {
  RunIdentity id = run_identity(record.config_text);
  record.method = std::move(id.method);
  record.model = std::move(id.model);
  record.suite = std::move(id.suite);
}

}  // namespace palladium

#endif  // PALLADIUM_STORE_RUN_IDENTITY_HPP_
