// The facade's own part: opening and batches forward to store/database.hpp; each table's
// methods are in store/<table>_table.cpp.
#include "store/run_store.hpp"

#include "store/content_hash.hpp"
#include "store/database.hpp"
#include "store/run_lock.hpp"

namespace palladium {

ResponseKey response_key(const std::string& provider, const std::string& model,
                         const std::string& system_prompt, const std::string& user_prompt,
                         const std::string& params_json, int sample_index, int64_t seed) {
  return {provider, model, prompt_hash(system_prompt, user_prompt), sha256_hex(params_json),
          sample_index, seed};
}

ResponseKey LlmResponseRecord::key() const {
  return response_key(provider, model, prompt_system, prompt_user, params_json, sample_index,
                      seed);
}

std::unique_ptr<RunStore> RunStore::open(const std::string& path, Mode mode) {
  Options options;
  options.mode = mode;
  return open(path, options);
}

std::unique_ptr<RunStore> RunStore::open(const std::string& path, const Options& options) {
  store::Database::Options o;
  o.read_only = options.mode == Mode::read_only;
  o.sync_full = options.sync == Sync::full;
  o.cache_statements = options.cache_statements;
  return std::unique_ptr<RunStore>(new RunStore(store::Database::open(path, o)));
}

RunStore::RunStore(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}

RunStore::~RunStore() = default;

const std::string& RunStore::path() const { return db_->path(); }

bool RunStore::read_only() const { return db_->read_only(); }

std::optional<pid_t> RunStore::writer_pid() const {
  if (db_->memory()) return std::nullopt;
  return RunLock::holder(path());
}

void RunStore::begin_batch() { db_->begin_batch(); }

void RunStore::commit_batch() { db_->commit_batch(); }

void RunStore::rollback_batch() { db_->rollback_batch(); }

bool RunStore::in_batch() const { return db_->in_batch(); }

}  // namespace palladium
