// Batch mode (llm.mode: batch): calls go to the provider's batch API at half the price,
// instead of one HTTP exchange each.
//
//   OpenAI:  the calls become lines of a JSONL file ({"custom_id", "method": "POST", "url":
//            "/v1/chat/completions", "body"}), uploaded with POST /v1/files (purpose=batch);
//            POST /v1/batches {input_file_id, endpoint, completion_window: "24h"}; GET
//            /v1/batches/{id} until completed / failed / expired / cancelled; then the
//            output_file_id and error_file_id contents (GET /v1/files/{id}/content), matched
//            to calls by custom_id.
//   Gemini:  POST models/{model}:batchGenerateContent with the calls inline
//            ({"batch": {"displayName", "inputConfig": {"requests": {"requests": [{"request",
//            "metadata": {"key"}}]}}}}); GET the returned batches/{id} operation until done;
//            its inlinedResponses come back in request order, each a response or an error.
//
// Calls started within `collect` of the first waiting one go out as one job (at most
// max_requests). Each answer is parsed by the provider exactly as an online answer is, so
// usage, finish reasons and errors keep their meaning. A job that fails, expires or is
// cancelled fails its calls that have no answer with the provider's reason (Errc
// unavailable: the gateway may submit them again in a new job).
//
// Never twice: a call's custom_id is a hash of its request body and samples, so the same call
// made after a restart has the same id. Before a job is created, its intent (a key hashed from
// its custom_ids, and the ids) is journalled; the job is created under that key (OpenAI
// metadata.palladium_key, Gemini displayName), and then recorded in the journal (a durable
// file) with its provider name. A runner killed between the create and that record, or a
// create whose answer was lost (the connection dropped), finds the intent open: it lists the
// provider's batches and polls the one carrying the key; only when none does is the intent
// abandoned and its calls submitted again. A runner asked for a call the journal places in an
// unfinished job (or an open intent) waits for that job instead of submitting the call again.
//
// Gemini's inline requests are bounded (20 MB a request): a job whose inline body would exceed
// gemini_inline_limit goes as a JSONL file ({"key", "request"} per line) uploaded through the
// File API (POST upload/v1beta/files, multipart), named by inputConfig.fileName; its answers
// come back in response.responsesFile, downloaded from download/v1beta/{file}:download.
//
// Threading: start() from any thread; one worker thread does all HTTP (blocking on the
// transport) and runs the `done` callbacks.

#ifndef PALLADIUM_LLM_BATCH_RUNNER_HPP_
#define PALLADIUM_LLM_BATCH_RUNNER_HPP_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llm/call_runner.hpp"

namespace palladium {

// The durable record of submitted batch jobs.
class BatchJournal {
 public:
  virtual ~BatchJournal();
  // The unfinished job holding `custom_id`, if any.
  virtual std::optional<std::string> job_for(const std::string& custom_id) = 0;
  // Every unfinished job (resumed and polled at start).
  virtual std::vector<std::string> open_jobs() = 0;
  virtual void submitted(const std::string& job, const std::vector<std::string>& custom_ids) = 0;
  virtual void finished(const std::string& job, const std::string& state) = 0;
  // A job about to be created under `key` (before the provider hears of it).
  virtual void intending(const std::string& key, const std::vector<std::string>& custom_ids) = 0;
  // The intent's job exists under `job` (closes the intent).
  virtual void created(const std::string& key, const std::string& job) = 0;
  // No job was created for the intent: its calls may be submitted again.
  virtual void abandoned(const std::string& key) = 0;
  // Open intents: key -> custom_ids.
  virtual std::vector<std::pair<std::string, std::vector<std::string>>> open_intents() = 0;
  // The open intent holding `custom_id`, if any.
  virtual std::optional<std::string> intent_for(const std::string& custom_id) = 0;
};

// An append-only JSONL file, flushed and fsync'd per record; read whole at open.
std::shared_ptr<BatchJournal> open_batch_journal(const std::string& path);

struct BatchOptions {
  std::chrono::milliseconds collect{2000};
  size_t max_requests = 10000;
  std::chrono::milliseconds poll_interval{std::chrono::seconds(10)};
  std::chrono::milliseconds exchange_timeout{std::chrono::minutes(5)};
  // Gemini: a job whose inline request body is larger goes as an uploaded JSONL file.
  size_t gemini_inline_limit = 19 * 1000 * 1000;
  std::shared_ptr<BatchJournal> journal;  // null: nothing durable (tests of the protocol)
};

// The provider must be "openai" or "gemini" (made by make_openai_provider /
// make_gemini_provider); throws std::invalid_argument otherwise.
std::unique_ptr<CallRunner> make_batch_runner(std::shared_ptr<HttpProvider> provider,
                                              std::shared_ptr<HttpTransport> transport,
                                              BatchOptions options);

}  // namespace palladium

#endif  // PALLADIUM_LLM_BATCH_RUNNER_HPP_
