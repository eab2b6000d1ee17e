// A GTest fixture whose actor system runs on CAF 0.17.6's test coordinator (scheduler.policy
// "testing"): no actor runs until the test says so, everything runs on the test's own thread
// in one deterministic order, and time stands still until the test advances it (delayed
// messages, request timeouts and every actor's clock().now() follow the simulated clock).
// So an actor test needs no sleeps, no polling loops and no threads: it sends, runs, and
// asserts on what came back.
//
//   auto reply = ask<DispatcherStats>(dispatcher, stats_atom::value);
//   run();
//   ASSERT_TRUE(reply->value);
//
// Actors spawned with track() are stopped when the test ends; ask() and collect() track their
// own.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "actors/errors.hpp"

namespace palladium::testing {

class DeterministicFixture : public ::testing::Test {
 protected:
  DeterministicFixture()
      : sys(config()), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {
    // Time 0 is "never" to some of the code under test (e.g. a log limiter's first window).
    sched.clock().current_time += std::chrono::hours(1);
  }

  ~DeterministicFixture() override {
    for (auto& a : tracked_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    run();
  }

  // Handles every message until no actor has one left. Timeouts fire only when advanced.
  size_t run() { return sched.run(); }

  // Moves the clock on by `by`, `step` at a time, handling after each step what its timeouts
  // started (a periodic tick that re-arms itself fires once per period, as it would live).
  void advance(caf::timespan by, caf::timespan step) {
    for (caf::timespan done{0}; done < by; done += step) {
      sched.advance_time(step);
      run();
    }
  }

  caf::actor_clock::time_point now() const { return sched.clock().now(); }

  template <class Handle>
  Handle track(Handle h) {
    tracked_.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }

  // The response to one request, once run() has let it arrive.
  template <class T>
  struct Reply {
    std::optional<T> value;
    caf::error error;
    bool answered() const { return value.has_value() || static_cast<bool>(error); }
  };

  // Sends a request from a fresh actor; the reply lands in the returned slot as run() goes.
  template <class T, class Handle, class... Ts>
  std::shared_ptr<Reply<T>> ask(const Handle& dest, Ts... xs) {
    auto reply = std::make_shared<Reply<T>>();
    track(sys.spawn([=](caf::event_based_actor* self) {
      self->request(dest, std::chrono::seconds(24 * 3600), xs...)
          .then([reply](T& v) { reply->value = std::move(v); },
                [reply](caf::error& e) { reply->error = std::move(e); });
    }));
    return reply;
  }

  // An actor that keeps every message of type `Msg` it receives after `Atom` (e.g. the
  // EvalAnswers a batch's sender gets), to play a peer that only listens.
  template <class Atom, class Msg>
  std::pair<caf::actor, std::shared_ptr<std::vector<Msg>>> collect() {
    auto got = std::make_shared<std::vector<Msg>>();
    auto a = sys.spawn([got](caf::event_based_actor*) -> caf::behavior {
      return {[got](Atom, Msg& m) { got->push_back(std::move(m)); }};
    });
    track(a);
    return {a, got};
  }

  static caf::actor_system_config& config() {
    static caf::actor_system_config cfg;
    static bool once = [] {
      cfg.set("scheduler.policy", caf::atom("testing"));
      cfg.set("logger.file-verbosity", caf::atom("quiet"));
      register_error_category(cfg);
      return true;
    }();
    (void)once;
    return cfg;
  }

  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;

 private:
  std::vector<caf::actor> tracked_;
};

}  // namespace palladium::testing
