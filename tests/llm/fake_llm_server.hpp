// Test helper: runs tests/llm/fake_llm_server.py (the local OpenAI + Gemini stand-in) as a
// child process on a free loopback port, and talks to its control endpoints.
//
//   FakeLlmServer server({"--api-key", "test-key"});
//   server.faults({"429:1", "ok"});
//   ... point a provider at server.openai_base_url() ...
//   auto log = server.log();  // every API request the server saw, in order
//
// The child is killed (SIGTERM, then reaped) when the object is destroyed.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/curl_transport.hpp"

extern char** environ;

namespace palladium::testing {

// One blocking exchange through any transport.
inline HttpResponse http_sync(HttpTransport& transport, HttpRequest request) {
  auto done = std::make_shared<std::promise<HttpResponse>>();
  auto result = done->get_future();
  transport.send(std::move(request), [done](HttpResponse r) { done->set_value(std::move(r)); });
  return result.get();
}

class FakeLlmServer {
 public:
  explicit FakeLlmServer(std::vector<std::string> extra_args = {}) {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() /
           ("palladium_fake_llm_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string port_file = (dir_ / "port").string();
    log_path_ = (dir_ / "requests.jsonl").string();
    std::vector<std::string> args = {"/usr/bin/python3",
                                     std::string(PALLADIUM_SOURCE_DIR) +
                                         "/tests/llm/fake_llm_server.py",
                                     "--port", "0", "--port-file", port_file, "--log", log_path_};
    for (auto& a : extra_args) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start the fake LLM server");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(port_file)) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        throw std::runtime_error("the fake LLM server exited at start");
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the fake LLM server did not start within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream(port_file) >> port_;
    transport_ = make_curl_transport();
  }

  ~FakeLlmServer() {
    transport_.reset();
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string root_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string openai_base_url() const { return root_url() + "/v1"; }
  std::string gemini_base_url() const { return root_url() + "/v1beta"; }
  const std::string& log_path() const { return log_path_; }

  // Queues faults for the next API requests, one each, in order (see the server's doc).
  void faults(const std::vector<std::string>& faults) {
    control("/_fake/faults", nlohmann::json{{"faults", faults}});
  }
  void configure(const nlohmann::json& config) { control("/_fake/config", config); }
  void reset() { control("/_fake/reset", nlohmann::json::object()); }

  // Every API request so far (the server's request log).
  nlohmann::json log() {
    HttpRequest r;
    r.method = "GET";
    r.url = root_url() + "/_fake/log";
    r.timeout = std::chrono::seconds(30);
    HttpResponse resp = http_sync(*transport_, r);
    if (resp.status != 200) throw std::runtime_error("fake server: cannot read the log");
    return nlohmann::json::parse(resp.body);
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }

  void control(const std::string& path, const nlohmann::json& body) {
    HttpRequest r;
    r.url = root_url() + path;
    r.body = body.dump();
    r.headers.push_back("Content-Type: application/json");
    r.timeout = std::chrono::seconds(30);
    HttpResponse resp = http_sync(*transport_, r);
    if (resp.status != 200) throw std::runtime_error("fake server: control " + path + " failed");
  }

  std::filesystem::path dir_;
  std::string log_path_;
  pid_t pid_ = 0;
  int port_ = 0;
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace palladium::testing
