// The judge's facts, from the judge pipe to the store (issue 20: one schema, protocol/
// judge_pipe.json). The fake judge answers from the real judge's result dict
// (judge/stages/context.py), the agent's JudgeProcess decodes the frame, and the store writes
// the row beside the agent facts: every fact and the timing spread land in their columns, and a
// fact nothing decided (the judge's None) stays NULL rather than becoming a default that claims
// something.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include "agent/judge_process.hpp"
#include "store/run_store.hpp"
#include "tests/agent/fake_judge_options.hpp"
#include "tests/agent/test_support.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium::agent {
namespace {

using namespace std::chrono_literals;

SampleRecord candidate(int64_t run_id, int sample_index) {
  SampleRecord c;
  c.run_id = run_id;
  c.workload = "8p";
  c.method = "iterative";
  c.seed = 3;
  c.sample_index = sample_index;
  c.prompt_system = "system";
  c.prompt_user = "user " + std::to_string(sample_index);
  c.code = "def workload(a, b): ...\n";
  c.response = "```python\n" + c.code + "```\n";
  return c;
}

// One evaluations column of `candidate_id` as SQLite's quote() spells it ("NULL" for NULL).
std::string column(const std::string& db_path, int64_t candidate_id, const std::string& name) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const std::string sql = "SELECT quote(" + name + ") FROM evaluations WHERE candidate_id = " +
                          std::to_string(candidate_id);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  std::string out = "(no row)";
  if (sqlite3_step(st) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

class JudgeFactsToStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("judge-facts");
    options_ = testing::fake_judge_options(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // The candidate's row, stored from what the judge answered to `code`.
  int64_t judge_and_store(RunStore& store, int64_t run, int index, const std::string& code,
                          JudgeSettings settings = {}) {
    JudgeProcess judge(options_);
    EXPECT_EQ(judge.start(), "");
    auto ready = judge.wait_ready(60s);
    EXPECT_TRUE(std::holds_alternative<JudgeReady>(ready));
    const int64_t cid = store.put_sample(candidate(run, index)).id;
    wire::Job job{cid, 0, "8p", code, "full", 30.0, {0, 1}, true, {}, settings};
    JudgeResult judged = judge.evaluate(job);
    judge.stop();
    AgentFacts agent;
    agent.agent_key = "Z85-key-of-agent-" + std::to_string(index);
    agent.agent_id = "host-" + std::to_string(index);
    agent.backend = "interpret";
    EXPECT_TRUE(store.put_evaluation(cid, Evaluated{judged.evaluation, agent, {}, std::nullopt}));
    return cid;
  }
  std::string dir_;
  JudgeOptions options_;
};

TEST_F(JudgeFactsToStoreTest, EveryFactAndTheSpreadReachTheirColumns) {
  TempDb db;
  auto store = RunStore::open(db.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  // The run's evaluation.compile_tier and full_shapes travel with the job to the judge.
  const int64_t cid = judge_and_store(*store, run, 0, "FACTS", JudgeSettings{"off", true});

  auto back = store->find_evaluation(cid);
  ASSERT_TRUE(back);
  const Evaluation& e = back->evaluation;
  EXPECT_EQ(e.verdict, Verdict::correct);
  EXPECT_EQ(e.numerics_ok, std::optional<bool>(true));
  EXPECT_EQ(e.structure_ok, std::optional<bool>(false));
  EXPECT_EQ(e.dtype_exact, std::optional<bool>(true));
  EXPECT_EQ(e.compile_finding, std::optional<std::string>(""));
  EXPECT_EQ(e.timing_runs, 7);
  EXPECT_EQ(e.kernel_ms_low, 1.8);
  EXPECT_EQ(e.kernel_ms_high, 2.4);
  EXPECT_EQ(e.baseline_ms_low, 4.5);
  EXPECT_EQ(e.baseline_ms_high, 5.5);
  EXPECT_EQ(back->agent.agent_key, "Z85-key-of-agent-0");

  // The columns themselves, as a person querying the database sees them.
  const std::string path = db.path();
  EXPECT_EQ(column(path, cid, "numerics_ok"), "1");
  EXPECT_EQ(column(path, cid, "structure_ok"), "0");
  EXPECT_EQ(column(path, cid, "dtype_exact"), "1");
  EXPECT_EQ(column(path, cid, "compile_finding"), "''");
  EXPECT_EQ(column(path, cid, "timing_runs"), "7");
  EXPECT_EQ(column(path, cid, "kernel_ms_low"), "1.8");
  EXPECT_EQ(column(path, cid, "kernel_ms_high"), "2.4");
  EXPECT_EQ(column(path, cid, "baseline_ms_low"), "4.5");
  EXPECT_EQ(column(path, cid, "baseline_ms_high"), "5.5");
  EXPECT_EQ(column(path, cid, "agent_key"), "'Z85-key-of-agent-0'");
  EXPECT_EQ(column(path, cid, "numerics_path"), "'mosaic_interpreter'");
  EXPECT_EQ(column(path, cid, "judge_settings_json"),
            "'{\"compile_tier\": \"off: the request asked for no compile tier\", "
            "\"full_shapes\": \"on\", \"overrides\": []}'");
}

TEST_F(JudgeFactsToStoreTest, FactsNothingDecidedStayNull) {
  TempDb db;
  auto store = RunStore::open(db.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = judge_and_store(*store, run, 1, "NO_FACTS");

  auto back = store->find_evaluation(cid);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->evaluation.verdict, Verdict::lint_rejected);
  EXPECT_FALSE(back->evaluation.numerics_ok.has_value());
  EXPECT_FALSE(back->evaluation.compile_finding.has_value());
  EXPECT_EQ(back->evaluation.timing_runs, 1) << "untimed (the judge's None) reads as one run";
  const std::string path = db.path();
  for (const char* name : {"numerics_ok", "structure_ok", "dtype_exact", "compile_finding",
                           "kernel_ms_low", "kernel_ms_high", "baseline_ms_low",
                           "baseline_ms_high"})
    EXPECT_EQ(column(path, cid, name), "NULL") << name;
  EXPECT_EQ(column(path, cid, "agent_key"), "'Z85-key-of-agent-1'");
}

}  // namespace
}  // namespace palladium::agent
