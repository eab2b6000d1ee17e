#include "llm/call_scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace palladium {
namespace {

// \x1f separates fields that may hold arbitrary text; lengths make the key unambiguous.
std::string group_key(const ChatRequest& r) {
  std::string k;
  auto field = [&k](const std::string& s) {
    k += std::to_string(s.size());
    k += '\x1f';
    k += s;
  };
  field(r.workload_id);
  field(std::string(to_string(r.role)));
  field(std::to_string(r.seed));
  char temp[32] = "-";
  if (r.temperature) std::snprintf(temp, sizeof temp, "%.17g", *r.temperature);
  field(temp);
  field(r.system_prompt);
  field(r.user_prompt);
  return k;
}

std::string sample_key(const std::string& group, int sample_index) {
  return group + '\x1e' + std::to_string(sample_index);
}

ProviderError with_attempts(const ProviderError& e, int attempts) {
  if (attempts <= 1) return e;
  return ProviderError(e.code(), std::string(e.what()) + " (gave up after " +
                                     std::to_string(attempts) + " attempts)",
                       e.retry_after(), e.http_status());
}

}  // namespace

CallScheduler::CallScheduler(SchedulerOptions options, TimePoint now)
    : o_(std::move(options)),
      retry_(o_.retry),
      spend_(o_.max_usd, o_.already_spent_usd) {
  if (o_.max_concurrent < 1) o_.max_concurrent = 1;
  if (o_.max_samples_per_call < 1) o_.max_samples_per_call = 1;
  concurrency_ = o_.max_concurrent;
  stats_.concurrency_window = concurrency_;
  if (o_.max_usd_per_window) window_.emplace(*o_.max_usd_per_window, o_.spend_window);
  if (o_.requests_per_minute > 0) {
    const double cap = std::max(1.0, o_.requests_per_minute / 60.0);
    // A limit below one per minute still refills (at a tiny rate) rather than never.
    const double rate = std::max(1e-9, (o_.requests_per_minute - cap) / 60.0);
    requests_.emplace(cap, rate, now);
  }
  if (o_.tokens_per_minute > 0) {
    const double cap = std::max(1.0, o_.tokens_per_minute / 60.0);
    const double rate = std::max(1e-9, (o_.tokens_per_minute - cap) / 60.0);
    tokens_.emplace(cap, rate, now);
  }
}

double CallScheduler::estimate_tokens(const ChatRequest& r, int n) const {
  const double prompt = static_cast<double>(r.system_prompt.size() + r.user_prompt.size() + 3) / 4;
  return prompt + static_cast<double>(n) * o_.max_output_tokens;
}

double CallScheduler::estimate_cost(const ChatRequest& r, int n) const {
  if (!o_.cost) return 0.0;
  Usage worst;
  worst.prompt_tokens = static_cast<int64_t>((r.system_prompt.size() + r.user_prompt.size() + 3) / 4);
  worst.completion_tokens = static_cast<int64_t>(n) * o_.max_output_tokens;
  return o_.cost(worst);
}

uint64_t CallScheduler::submit(const ChatRequest& request, TimePoint now) {
  const uint64_t ticket = next_ticket_++;
  const std::string group = group_key(request);
  const std::string key = sample_key(group, request.sample_index);
  auto found = slot_by_key_.find(key);
  if (found != slot_by_key_.end()) {
    slots_.at(found->second).tickets.push_back(ticket);
    return ticket;
  }
  Slot slot;
  slot.id = next_slot_++;
  slot.group = group;
  slot.key = key;
  slot.request = request;
  slot.tickets.push_back(ticket);
  slot.enqueued = slot.not_before = now;
  queued_by_group_[group].insert(slot.id);
  slot_by_key_[key] = slot.id;
  slots_.emplace(slot.id, std::move(slot));
  stats_.queued++;
  return ticket;
}

void CallScheduler::note_wakeup(TimePoint t) {
  if (!wakeup_ || t < *wakeup_) wakeup_ = t;
}

void CallScheduler::fail_all_queued(const ProviderError& error, Step& step) {
  for (auto g = queued_by_group_.begin(); g != queued_by_group_.end();) {
    for (uint64_t id : g->second) {
      Slot& s = slots_.at(id);
      for (uint64_t t : s.tickets) step.fail.push_back({t, error});
      slot_by_key_.erase(s.key);
      slots_.erase(id);
      stats_.queued--;
    }
    g = queued_by_group_.erase(g);
  }
}

ProviderError CallScheduler::deadline_error(const Slot& slot) const {
  const double secs =
      std::chrono::duration<double>(o_.call_deadline.value_or(std::chrono::milliseconds(0)))
          .count();
  char msg[160];
  std::snprintf(msg, sizeof msg,
                "%s: call_deadline: no answer within llm.call_deadline_s = %g s (%d attempt%s)",
                o_.provider.c_str(), secs, slot.attempts, slot.attempts == 1 ? "" : "s");
  std::string text = msg;
  if (!slot.last_error.empty()) text += "; the last attempt: " + slot.last_error;
  return ProviderError(Errc::deadline_exceeded, text);
}

// Fails the queued samples whose total deadline has passed (in flight ones end with their
// attempt, whose timeout was cut to the deadline).
void CallScheduler::fail_expired(TimePoint now, Step& step) {
  if (!o_.call_deadline) return;
  for (auto g = queued_by_group_.begin(); g != queued_by_group_.end();) {
    for (auto it = g->second.begin(); it != g->second.end();) {
      Slot& s = slots_.at(*it);
      if (!s.deadline || now < *s.deadline) {
        if (s.deadline) note_wakeup(*s.deadline);
        ++it;
        continue;
      }
      const ProviderError e = deadline_error(s);
      for (uint64_t t : s.tickets) step.fail.push_back({t, e});
      stats_.deadline_failures++;
      stats_.queued--;
      slot_by_key_.erase(s.key);
      slots_.erase(*it);
      it = g->second.erase(it);
    }
    g = g->second.empty() ? queued_by_group_.erase(g) : std::next(g);
  }
}

void CallScheduler::requeue(Slot& slot, TimePoint not_before) {
  slot.in_flight = false;
  slot.not_before = not_before;
  queued_by_group_[slot.group].insert(slot.id);
  stats_.queued++;
}

CallScheduler::Step CallScheduler::poll(TimePoint now) {
  Step step;
  wakeup_.reset();
  stats_.holding.clear();
  if (refused_) {
    fail_all_queued(*refused_, step);
    return step;
  }
  if (stopped_) {
    fail_all_queued(ProviderError(Errc::out_of_range, *stopped_), step);
    return step;
  }
  fail_expired(now, step);
  if (now < paused_until_) {
    if (!queued_by_group_.empty()) {
      note_wakeup(paused_until_);
      stats_.holding = "429 pause";
    }
    return step;
  }
  const int allowed = std::max(1, static_cast<int>(concurrency_));
  // Groups in the order of their oldest ready slot.
  for (;;) {
    // At the cap only job calls may start; a finish wakes us for the rest.
    const bool capped = capped_in_flight_ >= allowed;
    bool held_by_cap = false;
    const Slot* head = nullptr;
    std::vector<uint64_t> members;
    for (const auto& [group, ids] : queued_by_group_) {
      if (capped && !in_job(slots_.at(*ids.begin()).request)) {
        held_by_cap = true;
        continue;
      }
      std::vector<uint64_t> ready;
      TimePoint oldest_ready{};
      for (uint64_t id : ids) {
        const Slot& s = slots_.at(id);
        if (s.not_before > now) {
          note_wakeup(s.not_before);
          continue;
        }
        if (ready.empty()) oldest_ready = s.enqueued;
        if (static_cast<int>(ready.size()) < o_.max_samples_per_call) ready.push_back(id);
      }
      if (ready.empty()) continue;
      const bool full = static_cast<int>(ready.size()) >= o_.max_samples_per_call;
      if (!full && oldest_ready + o_.coalesce_window > now) {
        note_wakeup(oldest_ready + o_.coalesce_window);
        continue;
      }
      const Slot& first = slots_.at(ready.front());
      if (!head || first.id < head->id) {
        head = &first;
        members = std::move(ready);
      }
    }
    if (!head) {
      if (held_by_cap)
        stats_.holding = allowed < o_.max_concurrent ? "concurrency (learned from 429s)"
                                                     : "concurrency";
      return step;
    }

    const int n = static_cast<int>(members.size());
    const ChatRequest& request = head->request;
    const double est_tokens = estimate_tokens(request, n);
    const double est_cost = estimate_cost(request, n);
    if (requests_ && !requests_->can_take(1, now)) {
      note_wakeup(requests_->available_at(1, now));
      stats_.holding = "requests/min";
      return step;
    }
    if (tokens_ && !tokens_->can_take(est_tokens, now)) {
      note_wakeup(tokens_->available_at(est_tokens, now));
      stats_.holding = "tokens/min";
      return step;
    }
    if (!spend_.fits(est_cost)) {
      if (!calls_.empty()) {  // running calls will settle below their worst case
        stats_.holding = "dollar cap";
        return step;
      }
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "%s: dollar cap reached: spent $%.4f of the $%.4f cap (llm.max_usd); the "
                    "next call could cost up to $%.4f, so no more calls are issued",
                    o_.provider.c_str(), spend_.realised(), spend_.cap().value_or(0.0), est_cost);
      stopped_ = msg;
      fail_all_queued(ProviderError(Errc::out_of_range, *stopped_), step);
      return step;
    }
    if (window_ && !window_->fits(est_cost, now)) {
      const auto at = window_->fits_at(est_cost, now);
      if (!at) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      "%s: a call could cost up to $%.4f, more than the spend-rate limit of "
                      "$%.4f per %g s (llm.max_usd_per_window) allows in any window",
                      o_.provider.c_str(), est_cost, window_->limit(),
                      std::chrono::duration<double>(window_->window()).count());
        const ProviderError e(Errc::out_of_range, msg);
        for (uint64_t id : members) {
          Slot& s = slots_.at(id);
          for (uint64_t t : s.tickets) step.fail.push_back({t, e});
          queued_by_group_[head->group].erase(id);
          stats_.queued--;
          slot_by_key_.erase(s.key);
        }
        const std::string group = head->group;
        for (uint64_t id : members) slots_.erase(id);
        if (queued_by_group_[group].empty()) queued_by_group_.erase(group);
        continue;
      }
      stats_.spend_window_waits++;
      stats_.holding = "spend window";
      // Running calls may settle below their worst case and free room sooner: a finish polls.
      note_wakeup(*at);
      return step;
    }
    if (requests_) requests_->take(1, now);
    if (tokens_) tokens_->take(est_tokens, now);

    const uint64_t call_id = next_call_++;
    spend_.commit(call_id, est_cost);
    if (window_) window_->commit(call_id, est_cost, now);
    InFlightCall call;
    call.est_tokens = est_tokens;
    call.est_cost = est_cost;
    call.in_job = in_job(request);
    Start start;
    start.call_id = call_id;
    start.call.request = request;
    const std::string group = head->group;
    for (uint64_t id : members) {
      Slot& s = slots_.at(id);
      s.in_flight = true;
      s.attempts++;
      // The deadline runs from the first attempt: waiting for a free slot is not a stall.
      if (o_.call_deadline && !s.deadline && !call.in_job) s.deadline = now + *o_.call_deadline;
      queued_by_group_[group].erase(id);
      stats_.queued--;
      call.slots.push_back(id);
      start.call.sample_indices.push_back(s.request.sample_index);
    }
    if (queued_by_group_[group].empty()) queued_by_group_.erase(group);
    start.call.request.sample_index = start.call.sample_indices.front();
    for (uint64_t id : call.slots) {
      const Slot& s = slots_.at(id);
      if (!s.deadline) continue;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*s.deadline - now);
      if (!start.call.time_left || left < *start.call.time_left) start.call.time_left = left;
    }
    if (!call.in_job) capped_in_flight_++;
    calls_.emplace(call_id, std::move(call));
    stats_.calls_started++;
    stats_.in_flight = static_cast<int>(calls_.size());
    if (n > 1) stats_.samples_coalesced += n;
    step.start.push_back(std::move(start));
  }
}

CallScheduler::Step CallScheduler::finish(uint64_t call_id, const CallOutcome& outcome,
                                          TimePoint now) {
  Step step;
  auto it = calls_.find(call_id);
  if (it == calls_.end()) return step;
  InFlightCall call = std::move(it->second);
  calls_.erase(it);
  if (!call.in_job) capped_in_flight_--;
  stats_.in_flight = static_cast<int>(calls_.size());

  if (outcome.result && !outcome.result->completions.empty()) {
    const CallResult& r = *outcome.result;
    const size_t answered = std::min(r.completions.size(), call.slots.size());
    const double cost = o_.cost ? o_.cost(r.usage) : 0.0;
    spend_.settle(call_id, cost);
    if (window_) window_->settle(call_id, cost, now);
    if (o_.adaptive_concurrency && concurrency_ < o_.max_concurrent) {
      concurrency_ = std::min<double>(o_.max_concurrent, concurrency_ + 1.0 / concurrency_);
      stats_.concurrency_window = concurrency_;
    }
    if (tokens_) {
      const double used = static_cast<double>(r.usage.prompt_tokens + r.usage.output_tokens());
      if (call.est_tokens > used) tokens_->give_back(call.est_tokens - used, now);
    }
    CallResult totals = r;
    totals.completions.clear();
    const int64_t k = static_cast<int64_t>(answered);
    for (size_t i = 0; i < call.slots.size(); ++i) {
      Slot& s = slots_.at(call.slots[i]);
      if (i >= answered) {  // the API answered fewer than asked: ask again for the rest
        requeue(s, now);
        continue;
      }
      // Shares: integer division, the remainder to the first samples, so shares sum to the
      // call's totals exactly.
      auto share = [&](int64_t total) {
        return total / k + (static_cast<int64_t>(i) < total % k ? 1 : 0);
      };
      Usage u;
      u.prompt_tokens = share(r.usage.prompt_tokens);
      u.completion_tokens = share(r.usage.completion_tokens);
      u.thinking_tokens = share(r.usage.thinking_tokens);
      u.cached_prompt_tokens = std::min(share(r.usage.cached_prompt_tokens), u.prompt_tokens);
      u.estimated = r.usage.estimated;
      u.batch = r.usage.batch;
      for (size_t t = 0; t < s.tickets.size(); ++t) {
        Delivery d;
        d.ticket = s.tickets[t];
        d.call_id = call_id;
        d.sample_index = s.request.sample_index;
        d.completion = r.completions[i];
        d.paid = t == 0;
        if (d.paid) {
          d.usage = u;
          d.cost_usd = cost / static_cast<double>(k);
        } else {
          stats_.samples_shared++;
        }
        d.samples_in_call = static_cast<int>(k);
        d.call = totals;
        step.deliver.push_back(std::move(d));
        stats_.samples_delivered++;
      }
      slot_by_key_.erase(s.key);
      slots_.erase(s.id);
    }
    return step;
  }

  // A failure (an empty answer counts as one: nothing was delivered).
  ProviderError error = outcome.error ? *outcome.error
                                      : ProviderError(Errc::unavailable,
                                                      o_.provider + ": the call answered nothing");
  spend_.settle(call_id, 0.0);  // failed calls are not billed
  if (window_) window_->settle(call_id, 0.0, now);
  stats_.calls_failed++;
  if (error.code() == Errc::resource_exhausted) {
    stats_.rate_limited++;
    // Multiplicative decrease, once per pause: the 429s of calls that were already in flight
    // when the first one came back say nothing new about the rate.
    if (o_.adaptive_concurrency && now >= last_decrease_) {
      concurrency_ = std::max(1.0, concurrency_ / 2);
      stats_.concurrency_window = concurrency_;
      last_decrease_ = now + retry_.options().base_delay;
    }
  }
  if (error.code() == Errc::unauthenticated || error.code() == Errc::permission_denied) {
    refused_ = error;
  }
  std::optional<std::chrono::milliseconds> pause;
  for (uint64_t id : call.slots) {
    Slot& s = slots_.at(id);
    std::optional<std::chrono::milliseconds> delay;
    if (!refused_) delay = retry_.next_delay(error.code(), s.attempts, error.retry_after());
    s.last_error = error.what();
    if (s.deadline && (now >= *s.deadline || (delay && now + *delay >= *s.deadline))) {
      // A retry could only start at or after the deadline: fail now, by the deadline's name.
      const ProviderError e = deadline_error(s);
      for (uint64_t t : s.tickets) step.fail.push_back({t, e});
      stats_.deadline_failures++;
      slot_by_key_.erase(s.key);
      slots_.erase(id);
      continue;
    }
    if (delay) {
      requeue(s, now + *delay);
      stats_.retries++;
      if (!pause || *delay > *pause) pause = delay;
      continue;
    }
    const ProviderError final_error = with_attempts(error, s.attempts);
    for (uint64_t t : s.tickets) step.fail.push_back({t, final_error});
    slot_by_key_.erase(s.key);
    slots_.erase(id);
  }
  // A rate limit applies to the provider, not to one call: hold every new call back too.
  if (error.code() == Errc::resource_exhausted && pause) {
    paused_until_ = std::max(paused_until_, now + *pause);
  }
  if (refused_) fail_all_queued(*refused_, step);
  return step;
}

}  // namespace palladium
