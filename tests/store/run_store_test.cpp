#include "store/run_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "search/fnv1a.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

CandidateRecord candidate(int64_t run_id, int sample_index,
                          const std::string& code = "def workload(x): ...\n") {
  CandidateRecord c;
  c.run_id = run_id;
  c.workload = "8p";
  c.method = "iterative";
  c.seed = 3;
  c.sample_index = sample_index;
  c.prompt_system = "system";
  c.prompt_user = "user " + std::to_string(sample_index);
  c.response = "```python\n" + code + "```\n";
  c.code = code;
  return c;
}

EvaluationRecord evaluation(int64_t candidate_id, Verdict v) {
  EvaluationRecord e;
  e.candidate_id = candidate_id;
  e.verdict = v;
  e.stage = v == Verdict::correct ? "done" : "numerics";
  e.error_text = v == Verdict::correct ? "" : "max_abs_err 0.5 > atol";
  e.error_signature = v == Verdict::correct ? "" : "numerics:max_abs_err";
  e.stdout_text = "out";
  e.stderr_text = "err";
  e.stage_ms_json = R"({"lint":1.5,"numerics":200.25})";
  e.max_abs_err = 0.5;
  e.max_rel_err = 0.01;
  e.kernel_ms = 2.0;
  e.baseline_ms = 3.0;
  if (v == Verdict::correct) e.speedup = 1.5;
  e.timing_kind = "cpu-wall";
  e.agent_id = "agent-1";
  e.backend = "interpret";
  e.attempts = 2;
  return e;
}

std::string raw_pragma(const std::string& path, const char* pragma) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, pragma, -1, &st, nullptr), SQLITE_OK);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(RunStoreTest, OpensInWalMode) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  store->begin_or_resume_run("r", "config");
  // journal_mode=WAL is persistent: a fresh connection sees it too.
  EXPECT_EQ(raw_pragma(tmp.path(), "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_pragma(tmp.path(), "PRAGMA user_version"), "1");
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "-wal"));
}

TEST(RunStoreTest, OpenFailureNamesThePath) {
  const std::string bad = "/nonexistent_palladium_dir/x/run.db";
  try {
    RunStore::open(bad);
    FAIL() << "open did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }

  TempDb tmp;
  std::ofstream(tmp.path()) << "this is not an sqlite database, just text "
                               "long enough to fill a header page............";
  try {
    RunStore::open(tmp.path());
    FAIL() << "open of a text file did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(tmp.path()), std::string::npos)
        << e.what();
  }
}

TEST(RunStoreTest, ResumesByConfigHash) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  EXPECT_FALSE(store->latest_run_id().has_value());

  const int64_t a = store->begin_or_resume_run("first", "workloads: [8p]\n");
  const int64_t b = store->begin_or_resume_run("other", "workloads: [9p]\n");
  EXPECT_NE(a, b);
  EXPECT_EQ(store->latest_run_id(), b);

  store->finish_run(a, "interrupted");
  auto run = store->find_run(a);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_TRUE(run->finished_at.has_value());
  EXPECT_EQ(run->config_hash, fnv1a64_hex("workloads: [8p]\n"));

  // Same config text, any name: the same run, running again.
  EXPECT_EQ(store->begin_or_resume_run("renamed", "workloads: [8p]\n"), a);
  run = store->find_run(a);
  EXPECT_EQ(run->name, "first");
  EXPECT_EQ(run->status, "running");
  EXPECT_FALSE(run->finished_at.has_value());

  EXPECT_THROW(store->finish_run(999, "finished"), StoreError);
  EXPECT_FALSE(store->find_run(999).has_value());
}

TEST(RunStoreTest, CandidateInsertIsIdempotent) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");

  const int64_t id = store->insert_candidate(candidate(run, 0, "first\n"));
  // Same key, different content: the first write wins.
  EXPECT_EQ(store->insert_candidate(candidate(run, 0, "second\n")), id);
  EXPECT_EQ(store->candidates(run).size(), 1u);

  auto found = store->find_candidate(run, "8p", "iterative", 3, 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->code, "first\n");
  EXPECT_EQ(found->code_hash, fnv1a64_hex("first\n"));
  EXPECT_EQ(found->response, "```python\nfirst\n```\n");
  EXPECT_EQ(found->prompt_user, "user 0");
  EXPECT_FALSE(found->parent_id.has_value());
  EXPECT_FALSE(found->created_at.empty());

  // Any part of the key differing makes a new candidate.
  CandidateRecord child = candidate(run, 1);
  child.parent_id = id;
  const int64_t child_id = store->insert_candidate(child);
  EXPECT_NE(child_id, id);
  EXPECT_EQ(store->find_candidate(run, "8p", "iterative", 3, 1)->parent_id, id);
  CandidateRecord other_seed = candidate(run, 0);
  other_seed.seed = 4;
  EXPECT_NE(store->insert_candidate(other_seed), id);
  EXPECT_EQ(store->candidates(run).size(), 3u);

  EXPECT_FALSE(store->find_candidate(run, "8p", "iterative", 3, 9).has_value());
}

TEST(RunStoreTest, ForeignKeysAreEnforced) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  EXPECT_THROW(store->insert_candidate(candidate(/*run_id=*/42, 0)),
               StoreError);
  EXPECT_THROW(store->insert_evaluation(evaluation(77, Verdict::correct)),
               StoreError);
  const int64_t run = store->begin_or_resume_run("r", "c");
  EXPECT_TRUE(store->candidates(run).empty());
  EXPECT_TRUE(store->evaluations(run).empty());
}

TEST(RunStoreTest, EvaluationInsertIsIdempotent) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->insert_candidate(candidate(run, 0));

  EXPECT_FALSE(store->find_evaluation(cid).has_value());
  EXPECT_TRUE(store->insert_evaluation(evaluation(cid, Verdict::correct)));
  EXPECT_FALSE(
      store->insert_evaluation(evaluation(cid, Verdict::numerics_mismatch)));

  auto e = store->find_evaluation(cid);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->verdict, Verdict::correct);
  EXPECT_EQ(e->stage, "done");
  EXPECT_EQ(e->stdout_text, "out");
  EXPECT_EQ(e->stderr_text, "err");
  EXPECT_EQ(e->stage_ms_json, R"({"lint":1.5,"numerics":200.25})");
  EXPECT_EQ(e->max_abs_err, 0.5);
  EXPECT_EQ(e->max_rel_err, 0.01);
  EXPECT_EQ(e->kernel_ms, 2.0);
  EXPECT_EQ(e->baseline_ms, 3.0);
  EXPECT_EQ(e->speedup, 1.5);
  EXPECT_EQ(e->timing_kind, "cpu-wall");
  EXPECT_EQ(e->agent_id, "agent-1");
  EXPECT_EQ(e->backend, "interpret");
  EXPECT_EQ(e->attempts, 2);
  EXPECT_EQ(store->evaluations(run).size(), 1u);
}

TEST(RunStoreTest, NullableNumbersStayNull) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->insert_candidate(candidate(run, 0, ""));
  EvaluationRecord e;
  e.candidate_id = cid;
  e.verdict = Verdict::no_code;
  e.stage = "extract";
  ASSERT_TRUE(store->insert_evaluation(e));
  auto back = store->find_evaluation(cid);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->verdict, Verdict::no_code);
  EXPECT_FALSE(back->kernel_ms.has_value());
  EXPECT_FALSE(back->speedup.has_value());
  EXPECT_FALSE(back->max_abs_err.has_value());
  EXPECT_EQ(back->stage_ms_json, "{}");
}

TEST(RunStoreTest, LlmCallsAreAppended) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->insert_candidate(candidate(run, 0));
  LlmCallRecord call;
  call.run_id = run;
  call.candidate_id = cid;
  call.provider = "replay";
  call.model = "replay";
  call.prompt_tokens = 120;
  call.completion_tokens = 340;
  call.tokens_estimated = true;
  call.latency_ms = 0.25;
  const int64_t first = store->insert_llm_call(call);
  LlmCallRecord failed = call;
  failed.candidate_id.reset();
  EXPECT_NE(store->insert_llm_call(failed), first);

  const auto calls = store->llm_calls(run);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].id, first);
  EXPECT_EQ(calls[0].candidate_id, cid);
  EXPECT_EQ(calls[0].prompt_tokens, 120);
  EXPECT_EQ(calls[0].completion_tokens, 340);
  EXPECT_TRUE(calls[0].tokens_estimated);
  EXPECT_EQ(calls[0].latency_ms, 0.25);
  EXPECT_FALSE(calls[1].candidate_id.has_value());
}

TEST(RunStoreTest, ReopenAfterCloseKeepsEverything) {
  TempDb tmp;
  int64_t run = 0;
  int64_t cid = 0;
  {
    auto store = RunStore::open(tmp.path());
    run = store->begin_or_resume_run("r", "config v1");
    cid = store->insert_candidate(candidate(run, 0));
    ASSERT_TRUE(store->insert_evaluation(evaluation(cid, Verdict::correct)));
  }
  auto store = RunStore::open(tmp.path());
  EXPECT_EQ(store->latest_run_id(), run);
  EXPECT_EQ(store->begin_or_resume_run("r", "config v1"), run);
  // The resumed run finds what it paid for and writes nothing twice.
  EXPECT_EQ(store->insert_candidate(candidate(run, 0)), cid);
  EXPECT_FALSE(store->insert_evaluation(evaluation(cid, Verdict::crash)));
  EXPECT_EQ(store->find_evaluation(cid)->verdict, Verdict::correct);
  EXPECT_EQ(store->candidates(run).size(), 1u);
}

TEST(RunStoreTest, QueriesAreScopedToTheRun) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t r1 = store->begin_or_resume_run("a", "1");
  const int64_t r2 = store->begin_or_resume_run("b", "2");
  const int64_t c1 = store->insert_candidate(candidate(r1, 0));
  const int64_t c2 = store->insert_candidate(candidate(r2, 0));
  EXPECT_NE(c1, c2);  // same key apart from run_id
  store->insert_evaluation(evaluation(c1, Verdict::correct));
  store->insert_evaluation(evaluation(c2, Verdict::timeout));
  ASSERT_EQ(store->evaluations(r1).size(), 1u);
  EXPECT_EQ(store->evaluations(r1)[0].candidate_id, c1);
  ASSERT_EQ(store->candidates(r2).size(), 1u);
  EXPECT_EQ(store->candidates(r2)[0].id, c2);
}

}  // namespace
}  // namespace palladium
