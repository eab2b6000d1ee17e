// A FrameSink (actors/frame_sink.hpp) that keeps what the dispatcher sends, per peer, for a
// test on the deterministic fixture: no socket and no thread between the dispatcher and the
// test's agents (tests/actors/sim_agent.hpp).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/frame_sink.hpp"

namespace palladium::testing {

class RecordingSink : public FrameSink {
 public:
  // `authenticated`: the link is CURVE, so a peer's name is its key.
  explicit RecordingSink(bool authenticated = false) : authenticated_(authenticated) {}

  void send(std::string peer, std::string payload) override {
    outbox_[peer].push_back(std::move(payload));
  }
  void send_many(std::vector<std::pair<std::string, std::string>> frames) override {
    for (auto& [peer, payload] : frames) send(std::move(peer), std::move(payload));
  }
  void send_many(std::vector<OutboundFrame> frames) override {
    for (auto& f : frames)
      send(std::move(f.peer), f.shared ? f.shared->substr(f.offset, f.size) : f.payload);
  }
  bool authenticated() const override { return authenticated_; }
  std::chrono::microseconds batch_window() const override { return window_; }
  void set_batch_window(std::chrono::microseconds window) override { window_ = window; }
  void stop() override { stopped = true; }

  // The next frame sent to `peer` that it has not taken yet, or false.
  bool take(const std::string& peer, std::string& payload) {
    auto& q = outbox_[peer];
    if (q.empty()) return false;
    payload = std::move(q.front());
    q.pop_front();
    return true;
  }

  // Frames sent to `peer` that it has not taken yet.
  size_t waiting(const std::string& peer) const {
    auto it = outbox_.find(peer);
    return it == outbox_.end() ? 0 : it->second.size();
  }

  bool stopped = false;

 private:
  bool authenticated_;
  std::chrono::microseconds window_{0};
  std::map<std::string, std::deque<std::string>> outbox_;
};

}  // namespace palladium::testing
