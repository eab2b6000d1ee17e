#include "actors/frame_sink.hpp"

namespace palladium {
namespace {

class BridgeSink final : public FrameSink {
 public:
  explicit BridgeSink(std::shared_ptr<ZmqBridge> bridge) : bridge_(std::move(bridge)) {}
  void send(std::string peer, std::string payload) override {
    bridge_->send(std::move(peer), std::move(payload));
  }
  void send_many(std::vector<std::pair<std::string, std::string>> frames) override {
    bridge_->send_many(std::move(frames));
  }
  void send_many(std::vector<OutboundFrame> frames) override {
    bridge_->send_many(std::move(frames));
  }
  bool authenticated() const override { return bridge_->authenticated(); }
  std::chrono::microseconds batch_window() const override { return bridge_->batch_window(); }
  void set_batch_window(std::chrono::microseconds window) override {
    bridge_->set_batch_window(window);
  }
  void stop() override { bridge_->stop(); }

 private:
  std::shared_ptr<ZmqBridge> bridge_;
};

}  // namespace

std::shared_ptr<FrameSink> bridge_sink(std::shared_ptr<ZmqBridge> bridge) {
  return std::make_shared<BridgeSink>(std::move(bridge));
}

}  // namespace palladium
