#include "llm/curl_transport.hpp"

#include <curl/curl.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace palladium {
namespace {

// libcurl requires curl_global_init before any other thread uses it and once per process.
void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

TransportFailure failure_of(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return TransportFailure::none;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportFailure::timeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportFailure::connect;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TransportFailure::dropped;
    default:
      return TransportFailure::other;
  }
}

struct Exchange {
  HttpRequest request;
  HttpTransport::Done done;
  HttpResponse response;
  curl_slist* headers = nullptr;
  CURL* easy = nullptr;
  char error[CURL_ERROR_SIZE] = {0};
  std::chrono::steady_clock::time_point started;

  ~Exchange() {
    if (headers) curl_slist_free_all(headers);
    if (easy) curl_easy_cleanup(easy);
  }
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  ex->response.body.append(data, size * count);
  return size * count;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string line(data, size * count);
  // A new status line (after a 100 Continue or a redirect) starts a new header set.
  if (line.rfind("HTTP/", 0) == 0) {
    ex->response.headers.clear();
    return size * count;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = line.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t b = colon + 1, e = line.size();
  while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
  while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' ')) --e;
  ex->response.headers[name] = line.substr(b, e - b);
  return size * count;
}

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(CurlTransportOptions options) : options_(options) {
    global_init_once();
    multi_ = curl_multi_init();
    if (options_.max_host_connections > 0)
      curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
    thread_ = std::thread([this] { loop(); });
  }

  ~CurlTransport() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  void send(HttpRequest request, Done done) override {
    auto ex = std::make_unique<Exchange>();
    ex->request = std::move(request);
    ex->done = std::move(done);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_) {
        queue_.push_back(std::move(ex));
        ex = nullptr;
      }
    }
    if (ex) {  // shutting down: fail at once rather than never
      ex->response.failure = TransportFailure::cancelled;
      ex->response.failure_text = "the HTTP transport is shutting down";
      ex->done(std::move(ex->response));
      return;
    }
    curl_multi_wakeup(multi_);
  }

 private:
  void start(std::unique_ptr<Exchange> ex) {
    CURL* easy = curl_easy_init();
    ex->easy = easy;
    const HttpRequest& r = ex->request;
    curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    if (r.timeout.count() > 0) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(r.timeout.count()));
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
    if (r.fresh_connection) {
      curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
      curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    }
    if (r.method == "GET") {
      curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(easy, CURLOPT_POST, 1L);
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, r.body.data());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(r.body.size()));
      if (r.method != "POST") curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    for (const auto& h : r.headers) ex->headers = curl_slist_append(ex->headers, h.c_str());
    // No "Expect: 100-continue" round trip for large prompts.
    ex->headers = curl_slist_append(ex->headers, "Expect:");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, ex->headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, ex.get());
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, ex.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, ex->error);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, ex.get());
    ex->started = std::chrono::steady_clock::now();
    curl_multi_add_handle(multi_, easy);
    in_flight_.push_back(std::move(ex));
  }

  void finish(CURL* easy, CURLcode code) {
    for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it) {
      if ((*it)->easy != easy) continue;
      std::unique_ptr<Exchange> ex = std::move(*it);
      in_flight_.erase(it);
      curl_multi_remove_handle(multi_, easy);
      complete(*ex, code);
      return;
    }
  }

  static void complete(Exchange& ex, CURLcode code) {
    HttpResponse& resp = ex.response;
    resp.elapsed_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - ex.started)
                          .count();
    resp.failure = failure_of(code);
    if (resp.failure == TransportFailure::none) {
      long status = 0;
      curl_easy_getinfo(ex.easy, CURLINFO_RESPONSE_CODE, &status);
      resp.status = static_cast<int>(status);
    } else {
      resp.status = 0;
      resp.failure_text = ex.error[0] ? ex.error : curl_easy_strerror(code);
    }
    ex.done(std::move(resp));
  }

  void loop() {
    for (;;) {
      std::deque<std::unique_ptr<Exchange>> fresh;
      bool stopping;
      {
        std::lock_guard<std::mutex> lock(mu_);
        fresh.swap(queue_);
        stopping = stop_;
      }
      if (stopping) {
        for (auto& ex : fresh) in_flight_.push_back(std::move(ex));
        for (auto& ex : in_flight_) {
          if (ex->easy) curl_multi_remove_handle(multi_, ex->easy);
          ex->response.failure = TransportFailure::cancelled;
          ex->response.failure_text = "the HTTP transport shut down with the request in flight";
          ex->done(std::move(ex->response));
        }
        in_flight_.clear();
        return;
      }
      for (auto& ex : fresh) start(std::move(ex));
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE) finish(msg->easy_handle, msg->data.result);
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }

  CurlTransportOptions options_;
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  bool stop_ = false;                               // guarded by mu_
  std::deque<std::unique_ptr<Exchange>> queue_;     // guarded by mu_
  std::deque<std::unique_ptr<Exchange>> in_flight_;  // I/O thread only
};

}  // namespace

std::unique_ptr<HttpTransport> make_curl_transport(CurlTransportOptions options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace palladium
