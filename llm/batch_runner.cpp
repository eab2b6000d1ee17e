#include "llm/batch_runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/fnv1a.hpp"

namespace palladium {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

class FileJournal : public BatchJournal {
 public:
  explicit FileJournal(std::string path) : path_(std::move(path)) {
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object()) continue;  // a torn last line from a kill mid-write
      const std::string job = j.value("job", "");
      if (j.contains("intent")) {
        const std::string key = j["intent"].get<std::string>();
        if (!job.empty()) {  // created: the intent's ids now belong to the job
          for (const auto& id : intents_[key]) job_of_[id] = job;
          open_[job] = true;
          intents_.erase(key);
        } else if (j.contains("state")) {
          intents_.erase(key);
        } else {
          intents_[key] = j.value("ids", std::vector<std::string>{});
        }
      } else if (j.contains("ids")) {
        for (const auto& id : j["ids"]) job_of_[id.get<std::string>()] = job;
        open_[job] = true;
      } else if (j.contains("state")) {
        open_.erase(job);
      }
    }
  }

  void intending(const std::string& key, const std::vector<std::string>& ids) override {
    std::lock_guard<std::mutex> lock(mu_);
    append(json{{"intent", key}, {"ids", ids}});
    intents_[key] = ids;
  }
  void created(const std::string& key, const std::string& job) override {
    std::lock_guard<std::mutex> lock(mu_);
    append(json{{"intent", key}, {"job", job}});
    for (const auto& id : intents_[key]) job_of_[id] = job;
    open_[job] = true;
    intents_.erase(key);
  }
  void abandoned(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    append(json{{"intent", key}, {"state", "abandoned"}});
    intents_.erase(key);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> open_intents() override {
    std::lock_guard<std::mutex> lock(mu_);
    return {intents_.begin(), intents_.end()};
  }
  std::optional<std::string> intent_for(const std::string& custom_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, ids] : intents_)
      if (std::find(ids.begin(), ids.end(), custom_id) != ids.end()) return key;
    return std::nullopt;
  }

  std::optional<std::string> job_for(const std::string& custom_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = job_of_.find(custom_id);
    if (it == job_of_.end() || !open_.count(it->second)) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> open_jobs() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (auto& [job, _] : open_) out.push_back(job);
    return out;
  }
  void submitted(const std::string& job, const std::vector<std::string>& ids) override {
    std::lock_guard<std::mutex> lock(mu_);
    append(json{{"job", job}, {"ids", ids}});
    for (auto& id : ids) job_of_[id] = job;
    open_[job] = true;
  }
  void finished(const std::string& job, const std::string& state) override {
    std::lock_guard<std::mutex> lock(mu_);
    append(json{{"job", job}, {"state", state}});
    open_.erase(job);
  }

 private:
  // One line per record, on disk before the caller goes on: a coordinator killed right after
  // a submit finds the job on resume.
  void append(const json& j) {
    const std::string line = j.dump() + "\n";
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) throw std::runtime_error("batch journal " + path_ + ": cannot open for append");
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                    ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("batch journal " + path_ + ": write failed");
  }

  std::string path_;
  std::mutex mu_;
  std::map<std::string, std::string> job_of_;  // custom_id -> job
  std::map<std::string, bool> open_;
  std::map<std::string, std::vector<std::string>> intents_;  // key -> custom_ids
};

HttpResponse exchange(HttpTransport& t, HttpRequest r) {
  auto done = std::make_shared<std::promise<HttpResponse>>();
  auto got = done->get_future();
  t.send(std::move(r), [done](HttpResponse resp) { done->set_value(std::move(resp)); });
  return got.get();
}

std::string strip(std::string s, const std::string& suffix) {
  if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  return s;
}

struct Pending {
  std::string id;
  HttpRequest online;  // the request the call would send online (body, auth headers, URL)
  int n = 1;
  Clock::time_point started;
  CallRunner::Done done;
};

// A job about to be created (or whose create went unanswered), by its key.
struct Intent {
  std::string key;
  std::vector<std::string> ids;
  Clock::time_point next_try;
};

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

struct Job {
  std::string name;                 // OpenAI batch id / Gemini "batches/..."
  std::vector<std::string> ids;     // in request order (Gemini answers in this order)
  Clock::time_point next_poll;
};

class BatchRunner : public CallRunner {
 public:
  BatchRunner(std::shared_ptr<HttpProvider> provider, std::shared_ptr<HttpTransport> transport,
              BatchOptions o)
      : provider_(std::move(provider)), transport_(std::move(transport)), o_(std::move(o)) {
    if (provider_->name() != "openai" && provider_->name() != "gemini")
      throw std::invalid_argument("batch mode: provider '" + provider_->name() +
                                  "' has no batch API (openai and gemini do)");
    if (o_.journal) {
      for (const auto& job : o_.journal->open_jobs()) jobs_.push_back({job, {}, Clock::now()});
      for (auto& [key, ids] : o_.journal->open_intents())
        intents_.push_back({key, std::move(ids), Clock::now()});
    }
    worker_ = std::thread([this] { loop(); });
  }
  ~BatchRunner() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  std::string provider() const override { return provider_->name(); }
  std::string model() const override { return provider_->model(); }
  int max_samples_per_call() const override { return provider_->max_samples_per_call(); }
  std::string params_json(const ChatRequest& request) const override {
    SamplingParams s = provider_->sampling();
    if (request.temperature) s.temperature = request.temperature;
    return s.canonical();
  }

  void start(const ProviderCall& call, Done done) override {
    Pending p;
    p.n = static_cast<int>(call.sample_indices.size());
    p.online = provider_->build_request(call.request, p.n);
    std::string key = p.online.body;
    for (int i : call.sample_indices) key += "|" + std::to_string(i);
    p.id = "pd-" + fnv1a64_hex(key);
    p.started = Clock::now();
    p.done = std::move(done);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (base_.empty()) {  // every call of a provider has the same endpoint and key
        base_ = base_of(p);
        auth_ = auth_of(p);
      }
      auto ready = results_.find(p.id);
      if (ready != results_.end()) {  // answered by a job resumed from the journal
        auto r = std::move(ready->second);
        results_.erase(ready);
        deliver_later_.push_back({std::move(p), std::move(r)});
      } else if (o_.journal && (o_.journal->job_for(p.id) || o_.journal->intent_for(p.id))) {
        waiting_.emplace(p.id, std::move(p));  // its job is already submitted: poll it
      } else {
        queue_.push_back(std::move(p));
      }
    }
    cv_.notify_all();
  }

 private:
  struct Answer {
    std::optional<HttpResponse> response;  // the request's own HTTP answer
    std::string error;                     // or why it has none
    std::string job;
  };

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!deliver_later_.empty()) {
        auto now_ready = std::move(deliver_later_);
        deliver_later_.clear();
        lock.unlock();
        for (auto& [p, a] : now_ready) finish(p, a);
        lock.lock();
      }
      const auto now = Clock::now();
      if (!queue_.empty() &&
          (queue_.size() >= o_.max_requests || now >= queue_.front().started + o_.collect)) {
        std::vector<Pending> batch;
        while (!queue_.empty() && batch.size() < o_.max_requests) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        lock.unlock();
        submit(std::move(batch));
        lock.lock();
        continue;
      }
      // An intent whose create went unanswered (a kill, a dropped connection) is looked up
      // by its key before any of its calls may go out again.
      bool resolved = false;
      for (size_t i = 0; i < intents_.size() && !base_.empty(); ++i) {
        if (intents_[i].next_try > now) continue;
        Intent intent = intents_[i];
        intents_.erase(intents_.begin() + static_cast<long>(i));
        lock.unlock();
        resolve(std::move(intent));
        lock.lock();
        resolved = true;
        break;
      }
      if (resolved) continue;
      // A job resumed from the journal is polled once a call says where the API is.
      for (size_t i = 0; i < jobs_.size() && !base_.empty(); ++i) {
        if (jobs_[i].next_poll > now) continue;
        Job job = jobs_[i];
        lock.unlock();
        const bool over = poll(job);
        lock.lock();
        if (over) {
          jobs_.erase(jobs_.begin() + static_cast<long>(i));
        } else {
          jobs_[i].next_poll = Clock::now() + o_.poll_interval;
        }
        break;  // the job list may have changed: look again
      }
      auto wake = Clock::now() + o_.poll_interval;
      if (!queue_.empty()) wake = std::min(wake, queue_.front().started + o_.collect);
      for (const auto& j : jobs_) wake = std::min(wake, j.next_poll);
      for (const auto& i : intents_) wake = std::min(wake, i.next_try);
      if (deliver_later_.empty()) cv_.wait_until(lock, wake);
    }
  }

  HttpRequest api(const std::string& method, const std::string& url, std::string body,
                  const std::vector<std::string>& auth) const {
    HttpRequest r;
    r.method = method;
    r.url = url;
    r.body = std::move(body);
    for (const auto& h : auth)
      if (h.rfind("Content-Type", 0) != 0) r.headers.push_back(h);
    if (method == "POST") r.headers.push_back("Content-Type: application/json");
    r.timeout = o_.exchange_timeout;
    return r;
  }

  std::vector<std::string> auth_of(const Pending& p) const { return p.online.headers; }

  // The base URL and auth headers from a call's online request.
  std::string base_of(const Pending& p) const {
    if (provider_->name() == "openai") return strip(p.online.url, "/chat/completions");
    const auto models = p.online.url.find("/models/");
    return p.online.url.substr(0, models);
  }

  void fail_all(std::vector<Pending>& batch, const std::string& why) {
    for (auto& p : batch) p.done(CallOutcome{std::nullopt, ProviderError(Errc::unavailable, why)});
  }

  // What became of a create request: a job, a clear refusal, or no answer at all (the
  // connection dropped, a 5xx): then the job may exist, and only a lookup by key can tell.
  enum class Created { job, refused, unknown };

  static Created verdict_of(const HttpResponse& r) {
    if (r.status == 200) return Created::job;
    return r.status == 0 || r.status >= 500 ? Created::unknown : Created::refused;
  }

  void submit(std::vector<Pending> batch) {
    const std::string name = provider_->name();
    const std::string base = base_;
    std::vector<std::string> ids;
    for (const auto& p : batch) ids.push_back(p.id);
    std::string joined;
    for (const auto& id : ids) joined += id + "|";
    // Unique per attempt, so a job that failed once never answers a lookup for its retry.
    const std::string key =
        "palladium-" +
        fnv1a64_hex(joined + std::to_string(Clock::now().time_since_epoch().count()) + "#" +
                    std::to_string(++attempts_));
    if (o_.journal) o_.journal->intending(key, ids);
    Job job;
    job.ids = ids;
    std::string error;
    Created outcome = Created::refused;
    if (name == "openai") {
      std::string jsonl;
      for (const auto& p : batch)
        jsonl += json{{"custom_id", p.id},
                      {"method", "POST"},
                      {"url", "/v1/chat/completions"},
                      {"body", json::parse(p.online.body)}}
                     .dump() +
                 "\n";
      const std::string boundary = "palladium-batch-" + fnv1a64_hex(jsonl);
      std::string form = "--" + boundary +
                         "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" +
                         boundary +
                         "\r\nContent-Disposition: form-data; name=\"file\"; "
                         "filename=\"batch.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n" +
                         jsonl + "\r\n--" + boundary + "--\r\n";
      HttpRequest up = api("POST", base + "/files", std::move(form), auth_);
      up.headers.pop_back();  // not JSON: multipart
      up.headers.push_back("Content-Type: multipart/form-data; boundary=" + boundary);
      HttpResponse file = exchange(*transport_, up);
      json f = json::parse(file.body, nullptr, false);
      if (file.status != 200 || !f.is_object() || !f.contains("id")) {
        error = "openai batch: uploading the input file failed (HTTP " +
                std::to_string(file.status) + ")";
      } else {
        HttpRequest create = api("POST", base + "/batches",
                                 json{{"input_file_id", f["id"]},
                                      {"endpoint", "/v1/chat/completions"},
                                      {"completion_window", "24h"},
                                      {"metadata", {{"palladium_key", key}}}}
                                     .dump(),
                                 auth_);
        create.fresh_connection = true;
        HttpResponse created = exchange(*transport_, std::move(create));
        json b = json::parse(created.body, nullptr, false);
        outcome = verdict_of(created);
        if (outcome == Created::job && b.is_object() && b.contains("id"))
          job.name = b["id"].get<std::string>();
        else
          error = "openai batch: creating the batch failed (HTTP " +
                  std::to_string(created.status) + ")";
        if (outcome == Created::job && job.name.empty()) outcome = Created::unknown;
      }
    } else {
      json input;
      std::string inline_items;
      {
        json items = json::array();
        for (const auto& p : batch)
          items.push_back({{"request", json::parse(p.online.body)}, {"metadata", {{"key", p.id}}}});
        inline_items = items.dump();
        input = {{"requests", {{"requests", std::move(items)}}}};
      }
      if (inline_items.size() > o_.gemini_inline_limit) {
        std::string jsonl;
        for (const auto& p : batch)
          jsonl += json{{"key", p.id}, {"request", json::parse(p.online.body)}}.dump() + "\n";
        auto file = gemini_upload(key, jsonl);
        if (!file) error = "gemini batch: uploading the JSONL input file failed";
        input = {{"fileName", file.value_or("")}};
      }
      if (error.empty()) {
        const std::string url = strip(batch.front().online.url, ":generateContent") +
                                ":batchGenerateContent";
        HttpRequest create = api(
            "POST", url, json{{"batch", {{"displayName", key}, {"inputConfig", input}}}}.dump(),
            auth_);
        create.fresh_connection = true;
        HttpResponse created = exchange(*transport_, std::move(create));
        json op = json::parse(created.body, nullptr, false);
        outcome = verdict_of(created);
        if (outcome == Created::job && op.is_object() && op.contains("name"))
          job.name = op["name"].get<std::string>();
        else
          error = "gemini batch: batchGenerateContent failed (HTTP " +
                  std::to_string(created.status) + ")";
        if (outcome == Created::job && job.name.empty()) outcome = Created::unknown;
      }
    }
    if (outcome == Created::unknown) {
      spdlog::warn("{}; the job may exist: looking it up by its key {} before submitting again",
                   error, key);
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& p : batch) waiting_.emplace(p.id, std::move(p));
      intents_.push_back({key, ids, Clock::now() + o_.poll_interval});
      return;
    }
    if (!error.empty()) {
      if (o_.journal) o_.journal->abandoned(key);
      spdlog::warn("{}", error);
      fail_all(batch, error);
      return;
    }
    if (o_.journal) o_.journal->created(key, job.name);
    spdlog::info("{}: batch job {} submitted with {} requests", name, job.name, batch.size());
    job.next_poll = Clock::now() + o_.poll_interval;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : batch) waiting_.emplace(p.id, std::move(p));
    jobs_.push_back(std::move(job));
  }

  // Gemini File API, resumable upload in two exchanges: the start names the file and its
  // size and answers with an upload URL; the upload sends the bytes and finalizes. Returns the
  // file's name ("files/...").
  std::optional<std::string> gemini_upload(const std::string& key, const std::string& jsonl) {
    const std::string upload_base = replace_once(base_, "/v1beta", "/upload/v1beta");
    HttpRequest start = api("POST", upload_base + "/files",
                            json{{"file", {{"display_name", key}}}}.dump(), auth_);
    start.headers.push_back("X-Goog-Upload-Protocol: resumable");
    start.headers.push_back("X-Goog-Upload-Command: start");
    start.headers.push_back("X-Goog-Upload-Header-Content-Length: " + std::to_string(jsonl.size()));
    start.headers.push_back("X-Goog-Upload-Header-Content-Type: application/jsonl");
    HttpResponse started = exchange(*transport_, start);
    const std::string url = started.header("x-goog-upload-url");
    if (started.status != 200 || url.empty()) return std::nullopt;
    HttpRequest put = api("POST", url, jsonl, auth_);
    put.headers.pop_back();
    put.headers.push_back("Content-Type: application/jsonl");
    put.headers.push_back("X-Goog-Upload-Offset: 0");
    put.headers.push_back("X-Goog-Upload-Command: upload, finalize");
    HttpResponse done = exchange(*transport_, put);
    json f = json::parse(done.body, nullptr, false);
    if (done.status != 200 || !f.is_object() || !f.contains("file") || !f["file"].contains("name"))
      return std::nullopt;
    return f["file"]["name"].get<std::string>();
  }

  // An intent's job by its key: the provider's list of batches, page by page. Found: the job
  // is polled as if just created. Absent from a complete listing: no job was created, and
  // its calls go back to the queue. The listing failed: try again at the next poll.
  void resolve(Intent intent) {
    const bool openai = provider_->name() == "openai";
    std::optional<std::string> found;
    bool complete = false;
    std::string page;
    for (int pages = 0; pages < 100 && !found; ++pages) {
      const std::string url =
          openai ? base_ + "/batches?limit=100" + (page.empty() ? "" : "&after=" + page)
                 : base_ + "/batches?pageSize=100" + (page.empty() ? "" : "&pageToken=" + page);
      HttpResponse got = exchange(*transport_, api("GET", url, "", auth_));
      json l = json::parse(got.body, nullptr, false);
      if (got.status != 200 || !l.is_object()) break;
      const char* list_key = openai ? "data" : "operations";
      if (l.contains(list_key) && l[list_key].is_array()) {
        for (const auto& b : l[list_key]) {
          const json md = b.value("metadata", json::object());
          if (!md.is_object()) continue;
          const std::string k = openai ? md.value("palladium_key", std::string())
                                       : md.value("displayName", std::string());
          if (k == intent.key) {
            found = b.value(openai ? "id" : "name", std::string());
            break;
          }
        }
      }
      page = openai ? (l.value("has_more", false) ? l.value("last_id", std::string()) : "")
                    : l.value("nextPageToken", std::string());
      if (page.empty()) {
        complete = true;
        break;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (found && !found->empty()) {
      if (o_.journal) o_.journal->created(intent.key, *found);
      spdlog::info("{}: batch job {} found by its key {}: polling it, not submitting again",
                   provider_->name(), *found, intent.key);
      jobs_.push_back({*found, intent.ids, Clock::now()});
    } else if (complete) {
      if (o_.journal) o_.journal->abandoned(intent.key);
      spdlog::info("{}: no batch job carries the key {}: its {} calls go out again",
                   provider_->name(), intent.key, intent.ids.size());
      for (const auto& id : intent.ids) {
        auto w = waiting_.find(id);
        if (w == waiting_.end()) continue;
        w->second.started = Clock::now();
        queue_.push_back(std::move(w->second));
        waiting_.erase(w);
      }
    } else {
      intent.next_try = Clock::now() + o_.poll_interval;
      intents_.push_back(std::move(intent));
    }
  }

  // Polls `job`; true when it is over (answers handed out, or its calls failed).
  bool poll(const Job& job) {
    std::map<std::string, Answer> answers;
    std::string state;
    if (provider_->name() == "openai") {
      HttpResponse got = exchange(*transport_, api("GET", base_ + "/batches/" + job.name, "", auth_));
      json b = json::parse(got.body, nullptr, false);
      if (got.status != 200 || !b.is_object()) return false;  // try again at the next poll
      state = b.value("status", "");
      if (state != "completed" && state != "failed" && state != "expired" &&
          state != "cancelled")
        return false;
      auto read_file = [&](const char* key) {
        if (!b.contains(key) || !b[key].is_string()) return;
        HttpResponse f = exchange(
            *transport_,
            api("GET", base_ + "/files/" + b[key].get<std::string>() + "/content", "", auth_));
        size_t start = 0;
        while (start < f.body.size()) {
          size_t end = f.body.find('\n', start);
          if (end == std::string::npos) end = f.body.size();
          json line = json::parse(f.body.substr(start, end - start), nullptr, false);
          start = end + 1;
          if (!line.is_object() || !line.contains("custom_id")) continue;
          Answer a;
          a.job = job.name;
          if (line.contains("response") && line["response"].is_object()) {
            HttpResponse r;
            r.status = line["response"].value("status_code", 0);
            r.body = line["response"].contains("body") ? line["response"]["body"].dump() : "";
            a.response = std::move(r);
          } else if (line.contains("error") && line["error"].is_object()) {
            a.error = line["error"].value("code", std::string("error")) + ": " +
                      line["error"].value("message", std::string());
          }
          answers[line["custom_id"].get<std::string>()] = std::move(a);
        }
      };
      read_file("output_file_id");
      read_file("error_file_id");
      if (state != "completed") {
        std::string why = "openai batch " + job.name + " " + state;
        if (b.contains("errors") && b["errors"].is_object() && b["errors"].contains("data"))
          for (const auto& e : b["errors"]["data"]) why += ": " + e.value("message", std::string());
        state = why;
      }
    } else {
      HttpResponse got = exchange(*transport_, api("GET", base_ + "/" + job.name, "", auth_));
      json op = json::parse(got.body, nullptr, false);
      if (got.status != 200 || !op.is_object()) return false;
      if (!op.value("done", false)) return false;
      state = op.contains("metadata") ? op["metadata"].value("state", std::string()) : "";
      const json* out = nullptr;
      if (op.contains("response") && op["response"].contains("inlinedResponses"))
        out = &op["response"]["inlinedResponses"];
      else if (op.contains("metadata") && op["metadata"].contains("output") &&
               op["metadata"]["output"].contains("inlinedResponses"))
        out = &op["metadata"]["output"]["inlinedResponses"];
      const std::string responses_file =
          op.contains("response") && op["response"].is_object()
              ? op["response"].value("responsesFile", std::string())
              : std::string();
      if (!responses_file.empty()) {
        // A file job's answers: one {"key", "response" | "error"} per line.
        HttpResponse f = exchange(
            *transport_, api("GET", replace_once(base_, "/v1beta", "/download/v1beta") + "/" +
                                        responses_file + ":download?alt=media",
                             "", auth_));
        size_t start = 0;
        while (f.status == 200 && start < f.body.size()) {
          size_t end = f.body.find('\n', start);
          if (end == std::string::npos) end = f.body.size();
          json line = json::parse(f.body.substr(start, end - start), nullptr, false);
          start = end + 1;
          if (!line.is_object() || !line.contains("key")) continue;
          Answer a;
          a.job = job.name;
          if (line.contains("response")) {
            HttpResponse r;
            r.status = 200;
            r.body = line["response"].dump();
            a.response = std::move(r);
          } else if (line.contains("error") && line["error"].is_object()) {
            a.error = std::to_string(line["error"].value("code", 0)) + ": " +
                      line["error"].value("message", std::string());
          }
          answers[line["key"].get<std::string>()] = std::move(a);
        }
      }
      if (out && out->contains("inlinedResponses")) {
        const json& list = (*out)["inlinedResponses"];
        std::vector<std::string> ids = job.ids;
        for (size_t i = 0; i < list.size(); ++i) {
          const json& item = list[i];
          // Keys when the API returns them; request order otherwise (it answers in order).
          std::string id = i < ids.size() ? ids[i] : "";
          if (item.contains("metadata") && item["metadata"].contains("key"))
            id = item["metadata"]["key"].get<std::string>();
          if (id.empty()) continue;
          Answer a;
          a.job = job.name;
          if (item.contains("response")) {
            HttpResponse r;
            r.status = 200;
            r.body = item["response"].dump();
            a.response = std::move(r);
          } else if (item.contains("error")) {
            a.error = std::to_string(item["error"].value("code", 0)) + ": " +
                      item["error"].value("message", std::string());
          }
          answers[id] = std::move(a);
        }
      }
      if (state != "BATCH_STATE_SUCCEEDED") {
        std::string why = "gemini batch " + job.name + " " + state;
        if (op.contains("error") && op["error"].is_object())
          why += ": " + op["error"].value("message", std::string());
        state = why;
      }
    }
    if (o_.journal) o_.journal->finished(job.name, state);
    spdlog::info("{}: batch job {} ended: {} answers ({})", provider_->name(), job.name,
                 answers.size(), state);
    std::vector<std::pair<Pending, Answer>> ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<std::string> ids = job.ids;
      if (ids.empty())  // resumed from the journal: the answers name their calls
        for (auto& [id, _] : answers) ids.push_back(id);
      for (const auto& id : ids) {
        Answer a = answers.count(id) ? answers[id] : Answer{std::nullopt, state, job.name};
        if (a.error.empty() && !a.response) a.error = state;
        auto w = waiting_.find(id);
        if (w == waiting_.end()) {
          results_[id] = std::move(a);  // its call comes later (a resumed run)
          continue;
        }
        ready.push_back({std::move(w->second), std::move(a)});
        waiting_.erase(w);
      }
    }
    for (auto& [p, a] : ready) finish(p, a);
    return true;
  }

  void finish(Pending& p, const Answer& a) {
    CallOutcome out;
    try {
      if (!a.response) {
        throw ProviderError(Errc::unavailable, provider_->name() + ": batch " + a.job +
                                                   ": no answer for this request: " + a.error);
      }
      HttpResponse r = *a.response;
      r.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - p.started).count();
      CallResult result = provider_->parse_response(r);
      if (result.answers_all && !result.completions.empty())
        result.completions.resize(static_cast<size_t>(p.n), result.completions.front());
      if (result.completions.empty())
        throw ProviderError(Errc::unavailable, provider_->name() + ": batch answer with no completion");
      result.batch_id = a.job;
      result.usage.batch = true;
      out.result = std::move(result);
    } catch (const ProviderError& e) {
      out.error = e;
    } catch (const std::exception& e) {
      out.error = ProviderError(Errc::internal, provider_->name() + ": " + e.what());
    }
    p.done(std::move(out));
  }

  std::shared_ptr<HttpProvider> provider_;
  std::shared_ptr<HttpTransport> transport_;
  BatchOptions o_;
  std::string base_;
  std::vector<std::string> auth_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<Pending> queue_;                  // not yet submitted, oldest first
  std::map<std::string, Pending> waiting_;     // submitted, by custom_id
  std::map<std::string, Answer> results_;      // answered before their call was asked again
  std::vector<std::pair<Pending, Answer>> deliver_later_;
  std::vector<Job> jobs_;
  std::vector<Intent> intents_;  // creates not known to have made a job
  uint64_t attempts_ = 0;
  std::thread worker_;
};

}  // namespace

BatchJournal::~BatchJournal() = default;

std::shared_ptr<BatchJournal> open_batch_journal(const std::string& path) {
  return std::make_shared<FileJournal>(path);
}

std::unique_ptr<CallRunner> make_batch_runner(std::shared_ptr<HttpProvider> provider,
                                              std::shared_ptr<HttpTransport> transport,
                                              BatchOptions options) {
  return std::make_unique<BatchRunner>(std::move(provider), std::move(transport),
                                       std::move(options));
}

}  // namespace palladium
