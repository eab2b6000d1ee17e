#include <algorithm>

#include "store/column_sql.hpp"
#include "store/run_store.hpp"

namespace palladium {
namespace {

// The evaluations `e` of live candidates (samples `s`) matching `where`, by id.
const char* evaluation_sql(const store::Database& db, const char* key, const char* where) {
  return db.sql(key, [&] {
    return store::select_from<EvaluationRecord>(db) + where;
  });
}

std::vector<EvaluationRecord> read_evaluations(const store::Database& db, sqlite::Statement& st) {
  std::vector<EvaluationRecord> out;
  while (st.step()) out.push_back(store::read_row<EvaluationRecord>(db, st));
  return out;
}

// The INSERT of one row from its column list. A result from a key already quarantined is
// marked as it is written (needs_reevaluation, from the agent key's parameter). The first
// write wins, except over a row whose key was quarantined since: that row is replaced.
std::string insert_evaluation_sql() {
  const auto columns = store::written_columns<EvaluationRecord>();
  const auto key = std::find(columns.begin(), columns.end(), "agent_key");
  const std::string agent_key = "?" + std::to_string(key - columns.begin() + 1);
  std::string insert = store::insert_sql<EvaluationRecord>();
  insert.insert(insert.find(") VALUES ("), ", needs_reevaluation");
  insert.pop_back();  // the closing parenthesis of VALUES
  std::string update;
  for (const auto& column : columns)
    if (column != "candidate_id") update += column + " = excluded." + column + ", ";
  return insert + ", " + agent_key + " != '' AND EXISTS (SELECT 1 FROM quarantined_keys q " +
         "WHERE q.agent_key = " + agent_key + ")) ON CONFLICT (candidate_id) DO UPDATE SET " +
         update +
         "needs_reevaluation = excluded.needs_reevaluation, "
         "created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
         "WHERE evaluations.needs_reevaluation = 1";
}

}  // namespace

bool RunStore::put_evaluation(const EvaluationRecord& e) {
  store::WriteScope w(*db_, "put_evaluation");
  {
    sqlite::CachedUse role(db_->db(), "SELECT role FROM samples WHERE id = ?1");
    role->bind_int64(1, e.candidate_id);
    if (!role->step()) {
      db_->bad("put_evaluation: no sample " + std::to_string(e.candidate_id));
    }
    const std::string r = role->text(0);
    if (r != to_string(SampleRole::code) && r != to_string(SampleRole::repair)) {
      db_->bad("put_evaluation: sample " + std::to_string(e.candidate_id) + " has role '" + r +
               "', not a candidate (code or repair)");
    }
  }
  EvaluationRecord row = e;
  row.speedup = speedup(e.evaluation);
  row.agent.dispatches = std::max(1, e.agent.dispatches);
  static const std::string sql = insert_evaluation_sql();
  sqlite::CachedUse st(db_->db(), sql.c_str());
  store::bind_row(*db_, *st, row);
  st->run();
  const bool inserted = db_->changes() == 1;
  w.commit();
  return inserted;
}

bool RunStore::put_evaluation(int64_t candidate_id, const Evaluated& evaluated) {
  EvaluationRecord row;
  row.candidate_id = candidate_id;
  row.evaluation = evaluated.evaluation;
  row.agent = evaluated.agent;
  row.checks = evaluated.checks;
  return put_evaluation(row);
}

std::optional<EvaluationRecord> RunStore::find_evaluation(int64_t candidate_id) const {
  sqlite::CachedUse st(db_->db(),
                       evaluation_sql(*db_, "evaluations.find", "WHERE e.candidate_id = ?1"));
  st->bind_int64(1, candidate_id);
  if (!st->step()) return std::nullopt;
  return store::read_row<EvaluationRecord>(*db_, *st);
}

std::vector<EvaluationRecord> RunStore::evaluations(int64_t run_id) const {
  sqlite::CachedUse st(db_->db(),
                       evaluation_sql(*db_, "evaluations.of_run",
                                      "JOIN samples s ON s.id = e.candidate_id "
                                      "WHERE s.run_id = ?1 AND s.superseded = 0 ORDER BY e.id"));
  st->bind_int64(1, run_id);
  return read_evaluations(*db_, *st);
}

std::vector<EvaluationRecord> RunStore::search_evaluations(const SampleKey& k) const {
  sqlite::CachedUse st(db_->db(),
                       evaluation_sql(*db_, "evaluations.of_search",
                                      "JOIN samples s ON s.id = e.candidate_id "
                                      "WHERE s.run_id = ?1 AND s.workload = ?2 AND s.method = ?3 "
                                      "AND s.seed = ?4 AND s.superseded = 0 ORDER BY e.id"));
  st->bind_int64(1, k.run_id).bind_text(2, k.workload).bind_text(3, k.method).bind_int64(4, k.seed);
  return read_evaluations(*db_, *st);
}

}  // namespace palladium
