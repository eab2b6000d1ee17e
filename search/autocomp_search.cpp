#include "search/autocomp_search.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "search/beam_prompts.hpp"
#include "search/candidate_loss.hpp"
#include "search/response_parsing.hpp"
#include "search/rng.hpp"

namespace palladium {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("AutocompSearch: " + what);
}

// Autocomp draws the planning instruction per prompt: 0.1 invent a strategy
// inspired by the menu, 0.1 think of a different one, 0.8 apply one of them.
PlanInstruction draw_instruction(uint64_t seed, int sample_index) {
  SplitMix64 rng = decision_rng(seed, RngStream::plan_instruction,
                                static_cast<uint64_t>(sample_index));
  const double u = rng.uniform();
  if (u < 0.1) return PlanInstruction::invent_inspired;
  if (u < 0.2) return PlanInstruction::think_different;
  return PlanInstruction::apply_one;
}

}  // namespace

AutocompSearch::AutocompSearch(WorkloadBrief brief, Budget budget, AutocompConfig config,
                               StrategyMenus menus, uint64_t seed)
    : Strategy(std::move(budget)),
      brief_(std::move(brief)),
      config_(std::move(config)),
      menus_(std::move(menus)),
      seed_(seed),
      policy_(config_.policy) {
  require(config_.beam_size >= 1, "beam_size must be >= 1");
  require(config_.plans_per_parent >= 1, "plans_per_parent must be >= 1");
  require(config_.codes_per_plan >= 1, "codes_per_plan must be >= 1");
  require(config_.menu_keep >= 0.0 && config_.menu_keep <= 1.0, "menu_keep must be in [0, 1]");
  require(!config_.menu_one_shot || config_.menu_new_strategies >= 1,
          "menu_new_strategies must be >= 1 with menu_one_shot");
  require(config_.early_stop.window >= 0, "early_stop.window must be >= 0");
  require(!menus_.translate.empty(), "the translation menu is empty");
  require(!menus_.optimise.empty(), "the optimisation menu is empty");
  require(!config_.with_context || !brief_.context.empty(),
          "with_context set but the brief of workload " + brief_.id + " has no context");
  Member root;
  root.id = kRootId;
  root.code = brief_.baseline_source;
  root.loss = kRootLoss;
  members_.emplace(kRootId, std::move(root));
  beam_ = {kRootId};
  losses_.push_back(kRootLoss);
}

std::optional<double> AutocompSearch::translation_score(int id) const {
  auto it = members_.find(id);
  if (it == members_.end()) return std::nullopt;
  return it->second.translation_score;
}

PhaseView AutocompSearch::view() const {
  PhaseView v;
  v.generation = finished_generations_;
  v.phase = last_phase_;
  v.limit = budget().limit();
  v.spent = budget().spent();
  v.translate_spent = translate_spent_;
  v.translation_complete = translation_complete_;
  v.correct_seeds = static_cast<int>(
      std::count_if(beam_.begin(), beam_.end(), [](int id) { return id != kRootId; }));
  v.min_step_cost = min_cost(Phase::translate);
  return v;
}

std::optional<Phase> AutocompSearch::planned_phase() const {
  if (next_phase_decided_) {
    if (next_phase_) return next_phase_;
    // The translation search ended for good once its translation was complete;
    // an end for want of budget is looked at again when the budget moves.
    if (translation_complete_) return std::nullopt;
  }
  return policy_.next_phase(view());
}

int AutocompSearch::min_cost(Phase phase) const {
  const int menu = phase == Phase::optimise && config_.menu_one_shot ? cost(SampleRole::menu) : 0;
  return menu + cost(SampleRole::plan) + cost(SampleRole::code);
}

int AutocompSearch::full_cost(Phase phase) const {
  const int menu = phase == Phase::optimise && config_.menu_one_shot ? cost(SampleRole::menu) : 0;
  const int per_plan = cost(SampleRole::plan) + config_.codes_per_plan * cost(SampleRole::code);
  return static_cast<int>(beam_.size()) * (menu + config_.plans_per_parent * per_plan);
}

int AutocompSearch::want(Phase phase) const {
  const int allowance = policy_.allowance(phase, view());
  return std::max(min_cost(phase), std::min(full_cost(phase), allowance));
}

bool AutocompSearch::can_continue() const {
  if (stopped_) return false;
  if (gen_) return true;
  auto phase = planned_phase();
  if (!phase) return false;
  if (budget().is_open()) return budget().remaining() >= want(*phase);
  const int avail = std::min(budget().remaining(), policy_.allowance(*phase, view()));
  return avail >= min_cost(*phase);
}

int AutocompSearch::wanted() const {
  auto phase = planned_phase();
  return phase ? want(*phase) : 0;
}

bool AutocompSearch::finished() const {
  return stopped_ || (!gen_ && next_phase_decided_ && !next_phase_ && translation_complete_);
}

Phase AutocompSearch::current_phase() const {
  if (gen_) return gen_->phase;
  return planned_phase().value_or(last_phase_);
}

std::string AutocompSearch::stop_reason() const {
  if (!done()) return "";
  if (stopped_) return "early stop";
  if (finished()) return "translation complete";
  return "budget spent";
}

void AutocompSearch::add_slot(SampleRole role, int subject, int parent_pos, int depends) {
  Slot s;
  s.index = next_index_++;
  s.role = role;
  s.subject = subject;
  s.parent_pos = parent_pos;
  s.depends = depends;
  gen_->slot_of[s.index] = gen_->slots.size();
  gen_->slots.push_back(std::move(s));
}

bool AutocompSearch::start_generation() {
  if (!can_continue()) return false;
  const Phase phase = *planned_phase();
  const bool menu = phase == Phase::optimise && config_.menu_one_shot;
  const int n = static_cast<int>(beam_.size());
  int avail = std::min(budget().remaining(), policy_.allowance(phase, view()));

  // Which plans (and how many of their codes) fit: plan p of every parent
  // before plan p + 1 of any; a plan (and a parent's menu) only with a code.
  std::vector<std::vector<int>> codes(static_cast<size_t>(n));
  bool any = false;
  for (int p = 0; p < config_.plans_per_parent; ++p) {
    for (int j = 0; j < n; ++j) {
      auto& cj = codes[static_cast<size_t>(j)];
      if (static_cast<int>(cj.size()) != p) continue;  // an earlier plan did not fit
      const int head = (p == 0 && menu ? cost(SampleRole::menu) : 0) + cost(SampleRole::plan);
      if (avail < head + cost(SampleRole::code)) continue;
      avail -= head;
      int k = 0;
      while (k < config_.codes_per_plan && avail >= cost(SampleRole::code)) {
        avail -= cost(SampleRole::code);
        ++k;
      }
      cj.push_back(k);
      any = true;
    }
  }
  if (!any) return false;

  Generation g;
  g.number = finished_generations_ + 1;
  g.phase = phase;
  g.round = phase == Phase::translate ? ++translate_rounds_ : ++optimise_rounds_;
  g.parents = beam_;
  g.menus.resize(static_cast<size_t>(n));
  if (phase == Phase::optimise && !config_.menu_one_shot) {
    for (auto& m : g.menus) {
      m = menus_.optimise;
      m.emplace_back(kOtherMethods);
    }
  }
  gen_ = std::move(g);
  for (int j = 0; j < n; ++j) {
    const auto& cj = codes[static_cast<size_t>(j)];
    if (cj.empty()) continue;
    const int parent = beam_[static_cast<size_t>(j)];
    int menu_slot = -1;
    if (menu) {
      menu_slot = static_cast<int>(gen_->slots.size());
      add_slot(SampleRole::menu, parent, j, -1);
    }
    for (int k : cj) {
      const int plan_slot = static_cast<int>(gen_->slots.size());
      add_slot(SampleRole::plan, parent, j, menu_slot);
      for (int c = 0; c < k; ++c) add_slot(SampleRole::code, parent, j, plan_slot);
    }
  }
  return true;
}

std::vector<std::string> AutocompSearch::dropout(const std::vector<std::string>& menu,
                                                 int sample_index) const {
  SplitMix64 rng =
      decision_rng(seed_, RngStream::menu_dropout, static_cast<uint64_t>(sample_index));
  std::vector<std::string> kept;
  for (const auto& option : menu) {
    if (rng.uniform() < config_.menu_keep) kept.push_back(option);
  }
  return kept;
}

SampleRequest AutocompSearch::build_request(Slot& slot) {
  const Generation& g = *gen_;
  const Member& subject = members_.at(slot.subject);
  PromptKernel kernel{subject.code, subject.id == kRootId, subject.outcome.speedup(),
                      subject.outcome.timing_kind};
  SampleRequest r;
  r.sample_index = slot.index;
  r.role = slot.role;
  r.phase = g.phase;
  r.generation = g.number;
  if (subject.id != kRootId) r.parent_sample = subject.id;
  r.system_prompt =
      beam_system_prompt(slot.role, config_.with_context ? brief_.context : std::string());
  switch (slot.role) {
    case SampleRole::menu:
      r.user_prompt =
          menu_prompt(brief_, kernel, menus_.optimise, config_.menu_new_strategies);
      break;
    case SampleRole::plan:
      if (g.phase == Phase::translate) {
        r.user_prompt = translate_plan_prompt(brief_, kernel, menus_.translate, g.round);
      } else {
        r.user_prompt = optimise_plan_prompt(
            brief_, kernel, dropout(g.menus[static_cast<size_t>(slot.parent_pos)], slot.index),
            draw_instruction(seed_, slot.index), g.round);
      }
      break;
    case SampleRole::code: {
      const Slot& plan = g.slots[static_cast<size_t>(slot.depends)];
      r.plan_sample = plan.index;
      r.plan = plan.text;
      r.user_prompt = implement_prompt(brief_, kernel, plan.text, g.phase);
      break;
    }
    case SampleRole::repair:
      r.plan = subject.plan;
      r.user_prompt = repair_prompt(brief_, subject.code, subject.outcome, subject.plan);
      break;
    case SampleRole::score:
      r.user_prompt = score_prompt(brief_, subject.code);
      break;
  }
  return r;
}

std::vector<SampleRequest> AutocompSearch::next_requests(int max_n) {
  std::vector<SampleRequest> out;
  for (;;) {
    if (stopped_) return out;
    if (!gen_) {
      if (!start_generation()) return out;
    }
    Generation& g = *gen_;
    int charged = 0;
    for (auto& slot : g.slots) {
      if (static_cast<int>(out.size()) >= max_n) break;
      if (slot.issued || slot.skipped) continue;
      if (slot.depends >= 0) {
        const Slot& dep = g.slots[static_cast<size_t>(slot.depends)];
        if (dep.skipped) {
          slot.skipped = true;
          continue;
        }
        if (!dep.observed) continue;
      }
      const int c = cost(slot.role);
      const int allowance = policy_.allowance(g.phase, view());
      if (c > 0 && (budget().remaining() - charged < c ||
                    (g.phase == Phase::translate && allowance - charged < c))) {
        // Only reachable if the limit moved under a running generation.
        slot.skipped = true;
        continue;
      }
      out.push_back(build_request(slot));
      slot.issued = true;
      charged += c;
    }
    if (g.phase == Phase::translate) translate_spent_ += charged;
    if (!out.empty() || outstanding() > 0) return out;
    // Nothing issued and nothing in flight: the generation may be complete
    // because of skipped slots; move it on and look again.
    const int before = finished_generations_;
    advance();
    if (gen_ && finished_generations_ == before) {
      bool open_slots = std::any_of(g.slots.begin(), g.slots.end(), [](const Slot& s) {
        return !s.issued && !s.skipped;
      });
      if (!open_slots) return out;
    }
  }
}

void AutocompSearch::on_observation(const SampleRequest& request, const Observation& obs) {
  Generation& g = *gen_;
  Slot& slot = g.slots[g.slot_of.at(request.sample_index)];
  slot.observed = true;
  switch (slot.role) {
    case SampleRole::menu: {
      auto menu = menus_.optimise;
      for (auto& s : parse_strategy_list(obs.text)) menu.push_back(std::move(s));
      menu.emplace_back(kOtherMethods);
      g.menus[static_cast<size_t>(slot.parent_pos)] = std::move(menu);
      break;
    }
    case SampleRole::plan:
      slot.text = extract_plan(obs.text);
      break;
    case SampleRole::code:
    case SampleRole::repair: {
      Member m;
      m.id = slot.index;
      m.role = slot.role;
      if (slot.role == SampleRole::code) {
        m.parent = slot.subject;
        m.plan = g.slots[static_cast<size_t>(slot.depends)].text;
      } else {
        const Member& failed = members_.at(slot.subject);
        m.parent = failed.parent;
        m.plan = failed.plan;
      }
      const Member& parent = members_.at(*m.parent);
      m.ancestors = parent.ancestors;
      if (parent.id != kRootId) m.ancestors.insert(m.ancestors.begin(), parent.id);
      m.code = obs.code;
      m.outcome = *obs.outcome;
      m.loss = candidate_loss(m.outcome);
      g.new_members.push_back(m.id);
      members_[m.id] = std::move(m);
      break;
    }
    case SampleRole::score:
      members_.at(slot.subject).translation_score = parse_translation_score(obs.text);
      break;
  }
  advance();
}

void AutocompSearch::advance() {
  while (gen_) {
    Generation& g = *gen_;
    const bool complete = std::all_of(g.slots.begin(), g.slots.end(), [](const Slot& s) {
      return s.skipped || (s.issued && s.observed);
    });
    if (!complete) return;
    if (g.stage < 2) {
      g.stage++;
      add_fix_slots();
      continue;
    }
    finalize();
  }
}

void AutocompSearch::add_fix_slots() {
  Generation& g = *gen_;
  int avail = std::min(budget().remaining(), policy_.allowance(g.phase, view()));
  std::vector<int> ids = g.new_members;
  std::sort(ids.begin(), ids.end());
  // Stage 1 repairs failed codes and scores correct codes; stage 2 scores
  // the repairs that came back correct.
  const SampleRole scored = g.stage == 1 ? SampleRole::code : SampleRole::repair;
  if (g.stage == 1 && config_.repair) {
    for (int id : ids) {
      const Member& m = members_.at(id);
      if (m.role != SampleRole::code || !std::isinf(m.loss) || m.code.empty() ||
          m.outcome.error.empty()) {
        continue;
      }
      if (avail < cost(SampleRole::repair)) break;
      avail -= cost(SampleRole::repair);
      add_slot(SampleRole::repair, id, -1, -1);
    }
  }
  if (g.phase == Phase::translate && config_.translate_score) {
    for (int id : ids) {
      const Member& m = members_.at(id);
      if (m.role != scored || m.outcome.verdict != Verdict::correct) continue;
      if (avail < cost(SampleRole::score)) break;
      avail -= cost(SampleRole::score);
      add_slot(SampleRole::score, id, -1, -1);
    }
  }
}

BeamCandidate AutocompSearch::as_candidate(const Member& m) const {
  BeamCandidate c;
  c.id = m.id;
  c.parent = m.parent;
  c.parent_loss = m.parent ? members_.at(*m.parent).loss : kRootLoss;
  c.plan = m.plan;
  c.loss = m.loss;
  c.translation_score = m.translation_score;
  c.ancestors = m.ancestors;
  return c;
}

void AutocompSearch::finalize() {
  Generation& g = *gen_;
  const bool translating = g.phase == Phase::translate;
  std::vector<BeamCandidate> candidates;
  for (int id : beam_) candidates.push_back(as_candidate(members_.at(id)));
  std::vector<int> fresh = g.new_members;
  std::sort(fresh.begin(), fresh.end());
  for (int id : fresh) candidates.push_back(as_candidate(members_.at(id)));
  const std::set<int> exempt(beam_.begin(), beam_.end());
  SelectionRule rule;
  rule.keep = config_.beam_size;
  rule.translation_sort = translating && config_.translate_score;
  rule.keep_factor = keep_factor_for(g.number, translating, config_.translate_perf_threshold,
                                     config_.early_keep_factor, config_.early_keep_generations,
                                     config_.keep_factor);
  rule.dedup_level = config_.dedup_level;
  std::vector<BeamCandidate> next = select_beam(candidates, exempt, rule);

  finished_generations_ = g.number;
  last_phase_ = g.phase;
  if (translating) {
    translation_complete_ = palladium::translation_complete(next, config_.translate_exit_score);
    last_translate_generation_ = g.number;
  }
  PhaseView v = view();
  v.correct_seeds = static_cast<int>(
      std::count_if(next.begin(), next.end(), [](const BeamCandidate& c) { return c.parent; }));
  const std::optional<Phase> np = policy_.next_phase(v);
  if (translating && np != Phase::translate && config_.translate_drop_root) {
    std::vector<BeamCandidate> without_root;
    for (auto& c : candidates) {
      if (c.parent) without_root.push_back(c);
    }
    next = select_beam(without_root, exempt, rule);
  }
  if (!next.empty()) {
    beam_.clear();
    for (const auto& c : next) beam_.push_back(c.id);
  }
  next_phase_ = np;
  next_phase_decided_ = true;
  double best = std::numeric_limits<double>::infinity();
  for (int id : beam_) best = std::min(best, members_.at(id).loss);
  losses_.push_back(best);
  if (should_early_stop(losses_, g.number + 1, config_.early_stop, last_translate_generation_)) {
    stopped_ = true;
  }
  gen_.reset();
}

}  // namespace palladium
