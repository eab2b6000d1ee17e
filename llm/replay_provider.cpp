#include "llm/replay_provider.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "common/fnv1a.hpp"
#include "common/splitmix64.hpp"
#include "llm/token_estimate.hpp"

namespace palladium {

namespace {

namespace fs = std::filesystem;

class ReplayProvider : public Provider {
 public:
  explicit ReplayProvider(fs::path corpus_dir)
      : corpus_dir_(std::move(corpus_dir)) {}

  ChatResponse complete(const ChatRequest& request) override {
    const auto start = std::chrono::steady_clock::now();
    if (request.sample_index < 0) {
      throw ProviderError("replay: negative sample index " +
                              std::to_string(request.sample_index),
                          false);
    }
    const std::vector<std::string>& files = load(request.workload_id);
    const std::vector<size_t> perm =
        replay_permutation(request.workload_id, request.seed, files.size());
    const size_t k = static_cast<size_t>(request.sample_index) % files.size();

    ChatResponse response;
    response.text = files[perm[k]];
    response.model = "replay";
    response.prompt_tokens = estimate_tokens(request.system_prompt.size() +
                                             request.user_prompt.size());
    response.completion_tokens = estimate_tokens(response.text.size());
    response.tokens_estimated = true;
    response.latency_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count();
    return response;
  }

  std::string name() const override { return "replay"; }

 private:
  // The workload's responses in sorted file-name order, read once.
  const std::vector<std::string>& load(const std::string& workload_id) {
    auto it = cache_.find(workload_id);
    if (it != cache_.end()) return it->second;

    const fs::path dir = corpus_dir_ / workload_id;
    std::error_code ec;
    // An id is one path component; anything else would escape the corpus.
    const bool bad_id = workload_id.empty() || workload_id == "." ||
                        workload_id == ".." ||
                        workload_id.find('/') != std::string::npos;
    if (bad_id || !fs::is_directory(dir, ec)) {
      throw ProviderError(
          "replay: no corpus directory for workload '" + workload_id +
              "' at " + dir.string(),
          false);
    }
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".md") {
        paths.push_back(entry.path());
      }
    }
    if (ec) {
      throw ProviderError("replay: cannot list " + dir.string() + ": " +
                              ec.message(),
                          false);
    }
    if (paths.empty()) {
      throw ProviderError("replay: no *.md responses in " + dir.string(),
                          false);
    }
    std::sort(paths.begin(), paths.end(),
              [](const fs::path& a, const fs::path& b) {
                return a.filename().string() < b.filename().string();
              });
    std::vector<std::string> texts;
    texts.reserve(paths.size());
    for (const auto& p : paths) {
      std::ifstream in(p, std::ios::binary);
      if (!in) {
        throw ProviderError("replay: cannot read " + p.string(), false);
      }
      std::ostringstream buf;
      buf << in.rdbuf();  // an empty file is a valid (no-code) response
      texts.push_back(buf.str());
    }
    return cache_.emplace(workload_id, std::move(texts)).first->second;
  }

  fs::path corpus_dir_;
  std::map<std::string, std::vector<std::string>> cache_;
};

}  // namespace

std::vector<size_t> replay_permutation(std::string_view workload_id,
                                       uint64_t seed, size_t n) {
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), size_t{0});
  SplitMix64 rng(fnv1a64(workload_id) ^ seed);
  for (size_t i = n; i-- > 1;) {
    const size_t j = static_cast<size_t>(rng.next() % (i + 1));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

std::unique_ptr<Provider> make_replay_provider(fs::path corpus_dir) {
  return std::make_unique<ReplayProvider>(std::move(corpus_dir));
}

}  // namespace palladium
