// Autocomp's two-phase beam search (ucb-bar/autocomp BeamSearchStrategy,
// autocomp.md §1.3-1.8) as a Strategy over a sample budget.
//
// A generation (Autocomp's iteration i, numbered from 1) takes the beam
// (starting as the root: the baseline module) and, for each parent,
//   optimise only, with menu_one_shot: 1 menu sample (new strategies);
//   P plan samples: translation plans from the translation menu, or
//     optimisation plans from (menu + new strategies + "Other methods not
//     listed here.") after dropout, each option kept with p = menu_keep,
//     with Autocomp's 0.8 / 0.1 / 0.1 planning instruction;
//   C code samples per plan, implementing it;
// then, once every code is evaluated, with `repair` one repair sample per
// failed code that has error text (evaluated in turn); in translation with
// translate_score, one score sample per correct code or repair (0-10
// translation completeness); then selection (search/beam_selection.hpp) over
// incumbents + new candidates with B, the translation sort or the keep
// factor, incumbents exempt, dedup by (parent, plan); an empty selection
// keeps the previous beam (Autocomp walks back to the last non-empty one).
// After a translation generation the phase policy (search/phase_policy.hpp)
// decides the next phase; when translation ends (the policy switches, or the
// score exit fired) the beam is selected again without the root
// (translate_drop_root). Early stop (search/early_stop.hpp) is checked
// against the best beam loss at the start of each generation.
//
// Mapping Autocomp's iterations onto a sample budget (our choices):
//   - There is no iteration count: generations run until the budget, the
//     policy or early stop ends the search. Phase rounds in prompts say
//     "translation round k", not "k out of N".
//   - A generation is laid out when it starts, with its sample indices. If
//     the budget (or the translation allowance) cannot pay for all of it,
//     it is truncated in a fixed order: plan p of every parent before plan
//     p + 1 of any, each plan with as many of its C codes as fit, and a
//     plan or menu only if at least one code can follow it. With an open
//     budget a generation that does not fit waits for more budget instead.
//   - Repairs and, under budget.counts = calls, scores are paid from what
//     the layout left, in sample-index order; what does not fit is skipped.
//   - Candidates are ranked by relative time kernel/baseline
//     (search/candidate_loss.hpp), the root at exactly 1.0.
//   - A repair competes as a child of the failed candidate's parent with its
//     plan (so dedup treats it as another implementation of that plan); its
//     request's parent_sample is the failed candidate it fixes.
//   - "keep_factor 1.1 at iterations <= 2" uses the absolute generation
//     number, as Autocomp does (quirk 1).
//
// Determinism: sample indices, prompts and the random draws (dropout and the
// planning instruction, from search/rng.hpp keyed by sample index) depend on
// the seed, the config, the budget and the observations, never on the order
// observations arrive in. Several samples are in flight at once: all plans
// of a generation, then each plan's codes as soon as that plan is back.

#ifndef PALLADIUM_SEARCH_AUTOCOMP_SEARCH_HPP_
#define PALLADIUM_SEARCH_AUTOCOMP_SEARCH_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/beam_selection.hpp"
#include "search/early_stop.hpp"
#include "search/phase_policy.hpp"
#include "search/strategy.hpp"
#include "search/workload_brief.hpp"

namespace palladium {

struct AutocompConfig {
  int beam_size = 4;         // B
  int plans_per_parent = 4;  // P
  int codes_per_plan = 2;    // C
  double menu_keep = 0.25;   // Autocomp's dropout_menu_options: P(keep) per option
  bool menu_one_shot = true;  // one menu sample per parent in optimisation
  int menu_new_strategies = 10;
  bool translate_score = true;
  double translate_exit_score = 9.0;
  bool translate_drop_root = true;
  double translate_perf_threshold = 15.0;  // keep factor in translation without scores
  double early_keep_factor = 1.1;
  int early_keep_generations = 2;
  double keep_factor = 1.0;
  int dedup_level = 0;
  bool repair = false;  // Autocomp's reimplement_failed
  EarlyStopRule early_stop;
  PhasePolicyConfig policy;
  bool with_context = false;  // system prompts carry brief.context
};

// The strategy menus (workloads/context/menus/), already parsed.
struct StrategyMenus {
  std::vector<std::string> translate;
  std::vector<std::string> optimise;
};

class AutocompSearch final : public Strategy {
 public:
  // Throws std::invalid_argument naming the bad field: B, P or C < 1,
  // menu_keep outside [0, 1], an empty menu, a negative early-stop window,
  // a bad policy, or with_context without brief.context.
  AutocompSearch(WorkloadBrief brief, Budget budget, AutocompConfig config, StrategyMenus menus,
                 uint64_t seed);

  std::string method() const override { return "autocomp"; }

  // The current beam's member ids in beam order (kRootId for the root).
  std::vector<int> beam() const { return beam_; }
  int generations_finished() const { return finished_generations_; }
  int last_translate_generation() const { return last_translate_generation_; }
  int translate_spent() const { return translate_spent_; }
  bool translation_complete() const { return translation_complete_; }
  // The translation score a candidate was given, if any.
  std::optional<double> translation_score(int id) const;

 private:
  struct Member {
    int id = kRootId;
    SampleRole role = SampleRole::code;
    std::optional<int> parent;
    std::string plan;
    std::string code;
    EvalOutcome outcome;
    double loss = 0.0;
    std::optional<double> translation_score;
    std::vector<int> ancestors;
  };
  struct Slot {
    int index = 0;
    SampleRole role = SampleRole::code;
    int subject = kRootId;  // the member the sample builds on, repairs or scores
    int parent_pos = -1;    // menu/plan/code: the parent's position in the generation
    int depends = -1;       // slot that must be observed first (menu -> plan -> code)
    bool issued = false, observed = false, skipped = false;
    std::string text;       // a plan's extracted text
  };
  struct Generation {
    int number = 0;
    Phase phase = Phase::translate;
    int round = 0;  // generations of this phase so far, this one included
    std::vector<int> parents;
    std::vector<std::vector<std::string>> menus;  // optimisation menu per parent
    std::vector<Slot> slots;                      // in sample-index order
    std::map<int, size_t> slot_of;                // sample index -> slot
    int stage = 0;  // 0 layout, 1 repairs + scores of codes, 2 scores of repairs
    std::vector<int> new_members;
  };

  std::vector<SampleRequest> next_requests(int max_n) override;
  void on_observation(const SampleRequest& request, const Observation& observation) override;
  bool finished() const override;
  int wanted() const override;
  bool can_continue() const override;
  Phase current_phase() const override;
  std::string stop_reason() const override;

  PhaseView view() const;
  std::optional<Phase> planned_phase() const;
  int min_cost(Phase phase) const;
  int full_cost(Phase phase) const;
  int want(Phase phase) const;
  bool start_generation();
  void add_slot(SampleRole role, int subject, int parent_pos, int depends);
  SampleRequest build_request(Slot& slot);
  void advance();
  void add_fix_slots();
  void finalize();
  BeamCandidate as_candidate(const Member& m) const;
  std::vector<std::string> dropout(const std::vector<std::string>& menu, int sample_index) const;
  int cost(SampleRole role) const { return budget().cost(role); }

  WorkloadBrief brief_;
  AutocompConfig config_;
  StrategyMenus menus_;
  uint64_t seed_;
  PhasePolicy policy_;

  std::map<int, Member> members_;
  std::vector<int> beam_;
  std::optional<Generation> gen_;
  int next_index_ = 0;
  int finished_generations_ = 0;
  Phase last_phase_ = Phase::translate;  // phase of the last finished generation
  std::optional<Phase> next_phase_;      // decided after the last generation
  bool next_phase_decided_ = false;
  int translate_rounds_ = 0, optimise_rounds_ = 0;
  int translate_spent_ = 0;
  int last_translate_generation_ = 0;
  bool translation_complete_ = false;
  std::vector<double> losses_;  // best beam loss at the start of each generation
  bool stopped_ = false;
};

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_AUTOCOMP_SEARCH_HPP_
