#include "actors/zmq_bridge.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq_addon.hpp>

#include "protocol/curve_keys.hpp"
#include "protocol/endpoint.hpp"

namespace palladium {

namespace {

// ZeroMQ's ZAP endpoint; the handler must be bound before any CURVE socket accepts a peer.
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr const char* kZapDomain = "palladium";

std::string z85_of(const zmq::message_t& key) {
  if (key.size() != 32) return "";
  char out[41] = {0};
  if (zmq_z85_encode(out, static_cast<const uint8_t*>(key.data()), 32) == nullptr) return "";
  return out;
}

// A job frame carries a candidate's code (KBs): zmq takes the bytes over instead of copying
// them into a message of its own. Small frames (heartbeats) are cheaper copied.
constexpr std::size_t kZeroCopyBytes = 1024;

void free_string(void*, void* hint) { delete static_cast<std::string*>(hint); }

void release_shared(void*, void* hint) { delete static_cast<std::shared_ptr<const std::string>*>(hint); }

zmq::message_t body_of(OutboundFrame& f) {
  if (f.shared) {
    const char* data = f.shared->data() + f.offset;
    if (f.size < kZeroCopyBytes) return zmq::message_t(data, f.size);
    auto* share = new std::shared_ptr<const std::string>(std::move(f.shared));
    return zmq::message_t(const_cast<char*>(data), f.size, release_shared, share);
  }
  std::string& payload = f.payload;
  if (payload.size() < kZeroCopyBytes) return zmq::message_t(payload.data(), payload.size());
  auto* owned = new std::string(std::move(payload));
  return zmq::message_t(owned->data(), owned->size(), free_string, owned);
}

}  // namespace

ZmqBridge::ZmqBridge(ZmqBridgeOptions options)
    : ctx_(1), router_(ctx_, zmq::socket_type::router) {
  bind(options);
}

ZmqBridge::ZmqBridge(const std::string& endpoint)
    : ctx_(1), router_(ctx_, zmq::socket_type::router) {
  ZmqBridgeOptions o;
  o.endpoint = endpoint;
  bind(o);
}

void ZmqBridge::bind(const ZmqBridgeOptions& options) {
  // Thousands of agents: the default cap of 1023 sockets is per context, but each TCP peer is
  // a pipe of the one ROUTER, so only the fd limit matters; raise the context cap anyway.
  ctx_.set(zmq::ctxopt::max_sockets, 65536);
  router_.set(zmq::sockopt::router_mandatory, 1);
  router_.set(zmq::sockopt::linger, 0);
  // An agent whose old TCP connection is still half-open after a network drop reconnects
  // under a new routing id; handover is only a fallback for plaintext peers that reuse one.
  router_.set(zmq::sockopt::router_handover, 1);
  router_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(options.max_message_bytes));
  // Thousands of agents each with a job in flight: keep the queues deep enough.
  router_.set(zmq::sockopt::sndhwm, 0);
  router_.set(zmq::sockopt::rcvhwm, 0);
  // A fleet connects at once (a run's start, a coordinator restart). ZeroMQ's listen backlog
  // is 100: beyond it the kernel drops the connections' handshakes and each retries after 1,
  // 3, 7, 15, 31 ... s, so the last of 10,000 agents took minutes to get in (or never did
  // within the bench's join timeout). The kernel caps this at net.core.somaxconn.
  router_.set(zmq::sockopt::backlog, 16384);
  if (!options.curve_secret_key.empty()) {
    if (!zmq_has("curve")) throw std::runtime_error("this libzmq has no CURVE support");
    std::string pub;
    try {
      pub = keys::public_of(options.curve_secret_key);
    } catch (const keys::KeyError& e) {
      throw std::runtime_error(std::string("server key: ") + e.what());
    }
    curve_ = true;
    public_key_ = pub;
    allow_path_ = options.allow_path;
    if (!allow_path_.empty()) {
      try {
        for (const auto& k : keys::read_allowlist(allow_path_)) allowed_.insert(k);
      } catch (const keys::KeyError& e) {
        throw std::runtime_error(std::string("allowlist: ") + e.what());
      }
    }
    zap_.emplace(ctx_, zmq::socket_type::rep);
    zap_->set(zmq::sockopt::linger, 0);
    zap_->bind(kZapEndpoint);
    router_.set(zmq::sockopt::curve_server, 1);
    router_.set(zmq::sockopt::curve_secretkey, options.curve_secret_key);
    router_.set(zmq::sockopt::zap_domain, kZapDomain);
  } else if (!is_loopback_endpoint(options.endpoint) && !options.insecure_plaintext) {
    throw std::runtime_error(
        "refusing an unauthenticated link on " + options.endpoint +
        ": give the coordinator a CURVE key (palladium keys) or, on a network you trust "
        "completely, pass the insecure-plaintext option");
  }
  try {
    router_.bind(options.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot listen on " + options.endpoint + ": " + e.what());
  }
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

ZmqBridge::~ZmqBridge() {
  stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ZmqBridge::allow(const std::string& public_key) {
  std::lock_guard<std::mutex> guard(allow_mutex_);
  allowed_.insert(public_key);
}

bool ZmqBridge::key_allowed(const std::string& z85) {
  {
    std::lock_guard<std::mutex> guard(allow_mutex_);
    if (allowed_.count(z85)) return true;
  }
  // An unknown key: the allowlist may have grown since (a TPU VM launched mid-run).
  auto now = Clock::now();
  if (allow_path_.empty() || now - last_rescan_ < std::chrono::seconds(1)) return false;
  last_rescan_ = now;
  try {
    auto fresh = keys::read_allowlist(allow_path_);
    std::lock_guard<std::mutex> guard(allow_mutex_);
    for (const auto& k : fresh) allowed_.insert(k);
    return allowed_.count(z85) != 0;
  } catch (const keys::KeyError& e) {
    spdlog::warn("allowlist: {}", e.what());
    return false;
  }
}

int ZmqBridge::answer_zap() {
  // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
  std::vector<zmq::message_t> req;
  int answered = 0;
  // Bounded: a fleet connecting at once must not keep the bridge from its frames.
  while (answered < 256 &&
         zmq::recv_multipart(*zap_, std::back_inserter(req), zmq::recv_flags::dontwait)) {
    ++answered;
    bool ok = false;
    std::string user;
    std::string address = req.size() > 3 ? req[3].to_string() : "?";
    if (req.size() >= 7 && req[0].to_string_view() == "1.0" &&
        req[5].to_string_view() == "CURVE") {
      user = z85_of(req[6]);
      ok = !user.empty() && key_allowed(user);
    }
    if (!ok) {
      ++auth_refused_;
      spdlog::warn("refused a connection from {}: {}", address,
                   user.empty() ? "no CURVE key" : "key " + user.substr(0, 8) + "... is not allowed");
    }
    std::array<zmq::const_buffer, 6> reply{
        zmq::str_buffer("1.0"),
        zmq::buffer(req.size() > 1 ? req[1].to_string_view() : std::string_view()),
        zmq::buffer(std::string_view(ok ? "200" : "400")),
        zmq::buffer(std::string_view(ok ? "OK" : "not allowed")),
        zmq::buffer(user),
        zmq::const_buffer(nullptr, 0)};
    zmq::send_multipart(*zap_, reply);
    req.clear();
  }
  return answered;
}

void ZmqBridge::start(InboundFn on_inbound) {
  on_inbound_ = std::move(on_inbound);
  thread_ = std::thread([this] { loop(); });
}

void ZmqBridge::send(std::string peer, std::string payload) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    was_empty = outbox_.empty();
    outbox_.push_back(OutboundFrame{std::move(peer), std::move(payload), nullptr, 0, 0});
  }
  // One wake-up per batch: the loop drains the whole outbox each time.
  if (was_empty) wake();
}

void ZmqBridge::send_many(std::vector<std::pair<std::string, std::string>> frames) {
  std::vector<OutboundFrame> out;
  out.reserve(frames.size());
  for (auto& f : frames)
    out.push_back(OutboundFrame{std::move(f.first), std::move(f.second), nullptr, 0, 0});
  send_many(std::move(out));
}

void ZmqBridge::send_many(std::vector<OutboundFrame> frames) {
  if (frames.empty()) return;
  bool was_empty;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    was_empty = outbox_.empty();
    for (auto& f : frames) outbox_.push_back(std::move(f));
  }
  if (was_empty) wake();
}

void ZmqBridge::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
}

void ZmqBridge::stop() {
  // Both the dispatcher's exit handler and the owner may stop the bridge, from
  // different threads; a second concurrent join() would throw.
  std::lock_guard<std::mutex> guard(stop_mutex_);
  if (!thread_.joinable()) return;
  stopping_ = true;
  wake();
  thread_.join();
}

ZmqBridgeStats ZmqBridge::stats() const {
  ZmqBridgeStats s;
  s.frames_in = frames_in_;
  s.frames_out = frames_out_;
  s.dropped_out = dropped_out_;
  s.auth_refused = auth_refused_;
  s.malformed_in = malformed_in_;
  s.busy_turns = busy_turns_;
  s.longest_turn_us = longest_turn_us_;
  return s;
}

size_t ZmqBridge::flush_outbox(std::deque<OutboundFrame>& batch,
                               size_t limit) {
  size_t n = std::min(limit, batch.size());
  for (size_t i = 0; i < n; ++i) {
    OutboundFrame& frame = batch[i];
    const std::string& peer = frame.peer;
    const std::string* route = &peer;
    if (curve_) {
      auto it = routes_.find(peer);
      if (it == routes_.end()) {
        ++dropped_out_;
        continue;
      }
      route = &it->second.routing_id;
    }
    try {
      zmq::message_t head(route->data(), route->size());
      if (!router_.send(head, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        ++dropped_out_;
        continue;
      }
      if (router_.send(body_of(frame), zmq::send_flags::dontwait)) {
        ++frames_out_;
      } else {
        ++dropped_out_;
      }
    } catch (const zmq::error_t& e) {
      // EHOSTUNREACH: the connection is gone (router_mandatory makes that visible).
      ++dropped_out_;
      spdlog::debug("dropping frame to agent {}: {}", peer.substr(0, 8), e.what());
    }
  }
  batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

void ZmqBridge::loop() {
  std::vector<zmq::pollitem_t> items{{router_.handle(), 0, ZMQ_POLLIN, 0},
                                     {nullptr, wake_fd_, ZMQ_POLLIN, 0}};
  if (zap_) items.push_back({zap_->handle(), 0, ZMQ_POLLIN, 0});
  std::deque<OutboundFrame> batch;
  std::vector<zmq::message_t> parts;
  while (!stopping_) {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(batch.empty() ? -1 : 0));
    auto turn_start = Clock::now();
    int zap_answered = 0;
    size_t sent = 0, got_in = 0;
    if (zap_ && (items[2].revents & ZMQ_POLLIN)) zap_answered = answer_zap();
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t n;
      [[maybe_unused]] auto r = read(wake_fd_, &n, sizeof n);
      std::lock_guard<std::mutex> guard(mutex_);
      if (batch.empty()) {
        batch.swap(outbox_);
      } else {
        for (auto& f : outbox_) batch.push_back(std::move(f));
        outbox_.clear();
      }
    }
    // Bounded too: a broadcast to 10,000 agents goes out over several turns, between which
    // the bridge reads and answers ZAP.
    if (!batch.empty()) sent = flush_outbox(batch, 1024);
    if (items[0].revents & ZMQ_POLLIN) {
      std::vector<InboundFrame> frames;
      // Bounded, so a flood of inbound frames cannot starve the outbox or ZAP.
      for (int i = 0; i < 1024; ++i) {
        parts.clear();
        std::optional<size_t> got;
        try {
          got = zmq::recv_multipart(router_, std::back_inserter(parts), zmq::recv_flags::dontwait);
        } catch (const zmq::error_t& e) {
          spdlog::warn("receive failed: {}", e.what());
          break;
        }
        if (!got) break;
        if (parts.size() != 2) {
          ++malformed_in_;
          continue;
        }
        ++frames_in_;
        auto peer_address = [&] {
          const char* addr = zmq_msg_gets(parts[1].handle(), "Peer-Address");
          return std::string(addr ? addr : "");
        };
        std::string peer;
        std::string address;
        if (curve_) {
          const char* user = zmq_msg_gets(parts[1].handle(), "User-Id");
          if (user == nullptr || *user == '\0') {
            ++malformed_in_;
            continue;
          }
          std::string routing_id = parts[0].to_string();  // a few bytes: no allocation
          auto known = connections_.find(routing_id);
          if (known == connections_.end() || known->second.peer != user) {
            if (connections_.size() > 4 * routes_.size() + 1024) connections_.clear();
            known = connections_.insert_or_assign(routing_id, Connection{user, nullptr}).first;
            known->second.route = &routes_[known->second.peer];
          }
          peer = known->second.peer;
          // The latest connection of a key is where its frames go.
          Route& route = *known->second.route;
          if (route.routing_id != routing_id) {
            route.routing_id = std::move(routing_id);
            route.address = peer_address();
          }
          address = route.address;
        } else {
          peer = parts[0].to_string();
          address = peer_address();
        }
        if (frames.empty()) frames.reserve(64);  // not grown (and moved) frame by frame
        frames.push_back(InboundFrame{std::move(peer), InboundPayload(std::move(parts[1])),
                                      std::move(address), Clock::now()});
      }
      got_in = frames.size();
      if (!frames.empty()) on_inbound_(std::move(frames));
    }
    auto turn_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - turn_start)
                       .count();
    if (turn_us > longest_turn_us_) longest_turn_us_ = turn_us;
    if (turn_us > 200000)
      spdlog::warn("bridge turn took {} ms: {} ZAP answers, {} frames out, {} in", turn_us / 1000,
                   zap_answered, sent, got_in);
    if (sent + got_in > 0) {
      ++busy_turns_;
      // Batching (see the header): what arrives during the pause waits in ZeroMQ's pipes and
      // the outbox, and the next turn moves all of it. Frames stay in order; stop() waits at
      // most one window longer.
      auto window = std::chrono::microseconds(batch_window_us_.load(std::memory_order_relaxed));
      if (window.count() > 0 && !stopping_) std::this_thread::sleep_until(turn_start + window);
    }
    // More inbound may be waiting (the loop above is bounded): poll again without sleeping.
  }
}

}  // namespace palladium
