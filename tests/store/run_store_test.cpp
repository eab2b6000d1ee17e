#include "store/run_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/content_hash.hpp"
#include "store/run_lock.hpp"
#include "tests/store/temp_db.hpp"

namespace palladium {
namespace {

SampleRecord sample(int64_t run_id, int sample_index,
                    const std::string& code = "def workload(x): ...\n") {
  SampleRecord c;
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
  e.evaluation.verdict = v;
  e.evaluation.stage = v == Verdict::correct ? Stage::done : Stage::numerics;
  e.evaluation.error = v == Verdict::correct ? "" : "max_abs_err 0.5 > atol";
  e.evaluation.error_signature = v == Verdict::correct ? "" : "numerics:max_abs_err";
  e.evaluation.stdout_text = "out";
  e.evaluation.stderr_text = "err";
  e.evaluation.stage_ms = {{"lint", 1.5}, {"numerics", 200.25}};
  e.evaluation.max_abs_err = 0.5;
  e.evaluation.max_rel_err = 0.01;
  e.evaluation.kernel_ms = 2.0;
  e.evaluation.baseline_ms = 3.0;
  e.evaluation.timing_kind = TimingKind::cpu_wall;
  e.agent.agent_id = "agent-1";
  e.agent.backend = "interpret";
  e.agent.dispatches = 2;
  return e;
}

LlmResponseRecord response(const std::string& user, int sample_index = 0) {
  LlmResponseRecord r;
  r.provider = "openai";
  r.model = "gpt-x";
  r.params_json = R"({"temperature":0.7})";
  r.sample_index = sample_index;
  r.seed = 3;
  r.prompt_system = "system";
  r.prompt_user = user;
  r.text = "```python\ndef workload(x): ...\n```\n";
  r.model_reported = "gpt-x-2025";
  r.finish_reason = "stop";
  r.prompt_tokens = 1000;
  r.completion_tokens = 200;
  r.thinking_tokens = 50;
  r.latency_ms = 812.5;
  r.cost_usd = 0.0042;
  return r;
}

// A raw connection, to look at the file the way another program would.
struct Raw {
  explicit Raw(const std::string& path, int flags = SQLITE_OPEN_READONLY) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, flags, nullptr), SQLITE_OK);
  }
  ~Raw() { sqlite3_close(db); }
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "") << " in " << sql;
    sqlite3_free(err);
  }
  sqlite3* db = nullptr;
};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string open_error(const std::string& path, RunStore::Mode mode) {
  try {
    RunStore::open(path, mode);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

TEST(RunStoreTest, OpensInWalModeMarkedAsOurs) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  store->begin_or_resume_run("r", "config");
  Raw raw(tmp.path());
  // journal_mode=WAL is persistent: a fresh connection sees it too.
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.text("PRAGMA user_version"), "3");
  EXPECT_EQ(raw.text("PRAGMA application_id"), std::to_string(0x50414C44));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "-wal"));
}

TEST(RunStoreTest, OpenFailureNamesThePath) {
  const std::string bad = "/nonexistent_palladium_dir/x/run.db";
  EXPECT_NE(open_error(bad, RunStore::Mode::read_write).find(bad), std::string::npos);

  TempDb tmp;
  std::ofstream(tmp.path()) << "this is not an sqlite database, just text "
                               "long enough to fill a header page............";
  const std::string err = open_error(tmp.path(), RunStore::Mode::read_write);
  EXPECT_NE(err.find(tmp.path()), std::string::npos) << err;
}

TEST(RunStoreTest, RefusesAForeignSqliteFileWithoutChangingIt) {
  TempDb tmp;
  {
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    raw.exec("CREATE TABLE contacts (name TEXT, phone TEXT); "
             "INSERT INTO contacts VALUES ('ada', '123')");
  }
  const std::string before = file_bytes(tmp.path());
  for (auto mode : {RunStore::Mode::read_only, RunStore::Mode::read_write}) {
    const std::string err = open_error(tmp.path(), mode);
    EXPECT_NE(err.find("not a Palladium run store"), std::string::npos) << err;
    EXPECT_NE(err.find(tmp.path()), std::string::npos) << err;
  }
  EXPECT_EQ(file_bytes(tmp.path()), before);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(RunLock::lock_path(tmp.path())));
}

TEST(RunStoreTest, RefusesASchemaV1StoreSayingWhatToDo) {
  TempDb tmp;
  {
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    raw.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY); CREATE TABLE candidates (id INTEGER); "
             "CREATE TABLE evaluations (id INTEGER); CREATE TABLE llm_calls (id INTEGER); "
             "PRAGMA user_version=1");
  }
  const std::string before = file_bytes(tmp.path());
  const std::string err = open_error(tmp.path(), RunStore::Mode::read_write);
  EXPECT_NE(err.find("schema version 1"), std::string::npos) << err;
  EXPECT_NE(err.find("new database"), std::string::npos) << err;
  EXPECT_NE(err.find(tmp.path()), std::string::npos) << err;
  EXPECT_EQ(file_bytes(tmp.path()), before);
}

TEST(RunStoreTest, RefusesANewerSchema) {
  TempDb tmp;
  RunStore::open(tmp.path());
  {
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    raw.exec("PRAGMA user_version=4");
  }
  EXPECT_NE(open_error(tmp.path(), RunStore::Mode::read_only).find("newer"), std::string::npos);
}

TEST(RunStoreTest, ReadOnlyOpenNeverWrites) {
  TempDb tmp;
  EXPECT_NE(open_error(tmp.path(), RunStore::Mode::read_only).find("no such database"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp.path()));

  int64_t run = 0;
  {
    auto store = RunStore::open(tmp.path());
    run = store->begin_or_resume_run("r", "c");
    store->put_sample(sample(run, 0));
  }
  auto reader = RunStore::open(tmp.path(), RunStore::Mode::read_only);
  EXPECT_TRUE(reader->read_only());
  EXPECT_EQ(reader->candidates(run).size(), 1u);
  EXPECT_THROW(reader->put_sample(sample(run, 1)), StoreError);
  EXPECT_THROW(reader->finish_run(run, "finished"), StoreError);
  EXPECT_THROW(reader->begin_batch(), StoreError);
  // The writer closed without finishing the run; a reader changes nothing,
  // but can tell that no process runs it any more.
  EXPECT_EQ(reader->find_run(run)->status, "running");
  EXPECT_FALSE(reader->writer_pid().has_value());
  // A reader takes no lock: a writer may start beside it.
  EXPECT_FALSE(std::filesystem::exists(RunLock::lock_path(tmp.path())));
  auto writer = RunStore::open(tmp.path());
  EXPECT_EQ(reader->writer_pid(), getpid());
}

TEST(RunStoreTest, OneWritingProcessPerDatabaseNamingTheHolder) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  // In this process the lock is shared: a second connection is fine and
  // does not take the running run for a dead one.
  auto second = RunStore::open(tmp.path());
  EXPECT_EQ(second->find_run(run)->status, "running");

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      RunStore::open(tmp.path());
      code = 1;  // opened: the lock did not hold
    } catch (const StoreError& e) {
      const std::string msg = e.what();
      if (msg.find("in use by another run") == std::string::npos) code = 2;
      if (msg.find("pid " + std::to_string(getppid())) == std::string::npos) code = 3;
    }
    // The reader side works while the writer holds the lock.
    try {
      auto reader = RunStore::open(tmp.path(), RunStore::Mode::read_only);
      if (reader->writer_pid() != getppid()) code = 4;
      if (reader->find_run(run)->status != "running") code = 5;
    } catch (...) {
      code = 6;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RunStoreTest, TheLockDiesWithItsProcessAndTheRunIsMarkedInterrupted) {
  TempDb tmp;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = RunStore::open(tmp.path());
    store->begin_or_resume_run("r", "c");
    kill(getpid(), SIGKILL);  // dies holding the lock, its run 'running'
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  EXPECT_FALSE(RunLock::holder(tmp.path()).has_value());
  {
    auto reader = RunStore::open(tmp.path(), RunStore::Mode::read_only);
    EXPECT_FALSE(reader->writer_pid().has_value());
    EXPECT_EQ(reader->find_run(1)->status, "running");  // readers change nothing
  }
  auto store = RunStore::open(tmp.path());
  auto run = store->find_run(1);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_TRUE(run->finished_at.has_value());
  EXPECT_NE(run->status_reason.find("without finishing"), std::string::npos);
  // Resuming it makes it running again.
  EXPECT_EQ(store->begin_or_resume_run("r", "c"), 1);
  EXPECT_EQ(store->find_run(1)->status, "running");
  EXPECT_EQ(store->find_run(1)->status_reason, "");
}

TEST(RunStoreTest, ResumesByConfigHash) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  EXPECT_FALSE(store->latest_run_id().has_value());

  const int64_t a = store->begin_or_resume_run("first", "workloads: [8p]\n");
  const int64_t b = store->begin_or_resume_run("other", "workloads: [9p]\n");
  EXPECT_NE(a, b);
  EXPECT_EQ(store->latest_run_id(), b);

  store->finish_run(a, "interrupted", "SIGTERM");
  auto run = store->find_run(a);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_EQ(run->status_reason, "SIGTERM");
  EXPECT_TRUE(run->finished_at.has_value());
  EXPECT_EQ(run->config_hash, sha256_hex("workloads: [8p]\n"));

  // Same config text, any name: the same run, running again.
  EXPECT_EQ(store->begin_or_resume_run("renamed", "workloads: [8p]\n"), a);
  run = store->find_run(a);
  EXPECT_EQ(run->name, "first");
  EXPECT_EQ(run->status, "running");
  EXPECT_FALSE(run->finished_at.has_value());

  EXPECT_THROW(store->finish_run(999, "finished"), StoreError);
  EXPECT_THROW(store->finish_run(a, "done-ish"), StoreError);
  EXPECT_FALSE(store->find_run(999).has_value());
  EXPECT_EQ(store->runs().size(), 2u);
}

TEST(RunStoreTest, SweepsCellsAndTheirRuns) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t sweep = store->begin_or_resume_sweep("grid", "grid: {method: [a, b]}");
  EXPECT_EQ(store->begin_or_resume_sweep("again", "grid: {method: [a, b]}"), sweep);
  CellRecord cell;
  cell.sweep_id = sweep;
  cell.cell_key = "method=a";
  cell.ordinal = 0;
  cell.params_json = R"({"method":"a"})";
  cell.config_text = "method: a\n";
  const int64_t a = store->put_cell(cell);
  EXPECT_EQ(store->put_cell(cell), a);  // stable id
  cell.cell_key = "method=b";
  cell.ordinal = 1;
  cell.config_text = "method: a\n";  // the same run config in two cells
  const int64_t b = store->put_cell(cell);
  ASSERT_EQ(store->cells(sweep).size(), 2u);
  EXPECT_EQ(store->cells(sweep)[1].cell_key, "method=b");

  const int64_t run_a = store->begin_or_resume_run("a", "method: a\n", a);
  const int64_t run_b = store->begin_or_resume_run("b", "method: a\n", b);
  const int64_t plain = store->begin_or_resume_run("plain", "method: a\n");
  EXPECT_NE(run_a, run_b);
  EXPECT_NE(run_a, plain);
  EXPECT_EQ(store->begin_or_resume_run("a", "method: a\n", a), run_a);
  EXPECT_EQ(store->find_run(run_b)->cell_id, b);
  EXPECT_FALSE(store->find_run(plain)->cell_id.has_value());

  EXPECT_THROW(store->begin_or_resume_run("x", "y", 999), StoreError);
  cell.sweep_id = 999;
  EXPECT_THROW(store->put_cell(cell), StoreError);
}

TEST(RunStoreTest, SamplePutIsIdempotentForTheSamePrompt) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");

  const PutSampleResult first = store->put_sample(sample(run, 0, "first\n"));
  EXPECT_TRUE(first.inserted);
  // Same key and prompt, different answer: the first write wins.
  const PutSampleResult again = store->put_sample(sample(run, 0, "second\n"));
  EXPECT_EQ(again.id, first.id);
  EXPECT_FALSE(again.inserted);
  EXPECT_FALSE(again.superseded_id.has_value());
  EXPECT_EQ(store->candidates(run).size(), 1u);

  auto found = store->find_sample(SampleKey{run, "8p", "iterative", 3, 0});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, first.id);
  EXPECT_EQ(found->code, "first\n");
  EXPECT_EQ(found->code_hash, sha256_hex("first\n"));
  EXPECT_EQ(found->prompt_hash, prompt_hash("system", "user 0"));
  EXPECT_EQ(found->response, "```python\nfirst\n```\n");
  EXPECT_EQ(found->prompt_user, "user 0");
  EXPECT_EQ(found->role, SampleRole::code);
  EXPECT_EQ(found->phase, Phase::iterate);
  EXPECT_FALSE(found->parent_id.has_value());
  EXPECT_FALSE(found->created_at.empty());

  // Any part of the key differing makes a new sample.
  SampleRecord child = sample(run, 1);
  child.parent_id = first.id;
  const int64_t child_id = store->put_sample(child).id;
  EXPECT_NE(child_id, first.id);
  EXPECT_EQ(store->find_sample(SampleKey{run, "8p", "iterative", 3, 1})->parent_id, first.id);
  SampleRecord other_seed = sample(run, 0);
  other_seed.seed = 4;
  EXPECT_NE(store->put_sample(other_seed).id, first.id);
  EXPECT_EQ(store->candidates(run).size(), 3u);
  EXPECT_FALSE(store->find_sample(SampleKey{run, "8p", "iterative", 3, 9}).has_value());
}

TEST(RunStoreTest, AChangedPromptSupersedesTheStoredSample) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t old_id = store->put_sample(sample(run, 0, "old\n")).id;
  ASSERT_TRUE(store->put_evaluation(evaluation(old_id, Verdict::correct)));

  SampleRecord changed = sample(run, 0, "new\n");
  changed.prompt_user = "user 0, with the context blocks this time";
  const PutSampleResult put = store->put_sample(changed);
  EXPECT_TRUE(put.inserted);
  EXPECT_NE(put.id, old_id);
  EXPECT_EQ(put.superseded_id, old_id);

  auto live = store->find_sample(SampleKey{run, "8p", "iterative", 3, 0});
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(live->id, put.id);
  EXPECT_EQ(live->code, "new\n");
  EXPECT_TRUE(store->find_sample(old_id)->superseded);
  // Reports see the live sample only, and not the old one's evaluation.
  ASSERT_EQ(store->candidates(run).size(), 1u);
  EXPECT_EQ(store->candidates(run)[0].id, put.id);
  EXPECT_TRUE(store->evaluations(run).empty());
  EXPECT_EQ(store->samples(run, RunStore::Texts::none, /*include_superseded=*/true).size(), 2u);

  store->supersede_sample(put.id);
  EXPECT_FALSE(store->find_sample(SampleKey{run, "8p", "iterative", 3, 0}).has_value());
  EXPECT_THROW(store->supersede_sample(12345), StoreError);
}

TEST(RunStoreTest, SearchSamplesLoadsOneSearchsLiveSamplesAndEvaluations) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  // Stored out of index order, plus rows of other searches and a superseded one.
  const int64_t s2 = store->put_sample(sample(run, 2)).id;
  const int64_t s0 = store->put_sample(sample(run, 0)).id;
  ASSERT_TRUE(store->put_evaluation(evaluation(s2, Verdict::correct)));
  SampleRecord other_seed = sample(run, 0);
  other_seed.seed = 4;
  store->put_evaluation(evaluation(store->put_sample(other_seed).id, Verdict::correct));
  SampleRecord other_workload = sample(run, 1);
  other_workload.workload = "1p";
  store->put_sample(other_workload);
  const int64_t old1 = store->put_sample(sample(run, 1)).id;
  ASSERT_TRUE(store->put_evaluation(evaluation(old1, Verdict::numerics_mismatch)));
  SampleRecord changed = sample(run, 1, "new\n");
  changed.prompt_user = "another prompt";
  const int64_t s1 = store->put_sample(changed).id;

  StoredSearch got = store->search_samples(SampleKey{run, "8p", "iterative", 3, 99});
  ASSERT_EQ(got.samples.size(), 3u);
  EXPECT_EQ(got.samples[0].id, s0);
  EXPECT_EQ(got.samples[1].id, s1);
  EXPECT_EQ(got.samples[2].id, s2);
  EXPECT_EQ(got.samples[1].prompt_user, "another prompt");  // with texts
  ASSERT_EQ(got.evaluations.size(), 1u);  // not the superseded sample's
  EXPECT_EQ(got.evaluations[0].candidate_id, s2);
  EXPECT_TRUE(store->search_samples(SampleKey{run, "8p", "autocomp", 3, 0}).samples.empty());
}

TEST(RunStoreTest, SampleRolesPhasesPlansAndScores) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  SampleRecord seed_kernel = sample(run, 0);
  seed_kernel.method = "autocomp";
  seed_kernel.phase = Phase::translate;
  const int64_t seed_id = store->put_sample(seed_kernel).id;

  SampleRecord plan = sample(run, 1, "");
  plan.method = "autocomp";
  plan.role = SampleRole::plan;
  plan.phase = Phase::optimise;
  plan.generation = 2;
  plan.parent_id = seed_id;
  plan.response = "1. tile the K loop by 512";
  const int64_t plan_id = store->put_sample(plan).id;

  SampleRecord code = sample(run, 2);
  code.method = "autocomp";
  code.phase = Phase::optimise;
  code.generation = 2;
  code.parent_id = seed_id;
  code.plan_id = plan_id;
  code.plan = plan.response;
  const int64_t code_id = store->put_sample(code).id;

  SampleRecord score = sample(run, 3, "");
  score.method = "autocomp";
  score.role = SampleRole::score;
  score.phase = Phase::translate;
  score.parent_id = seed_id;
  score.response = "SCORE: 8.5";
  score.score = 8.5;
  store->put_sample(score);

  auto back = store->find_sample(code_id);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->phase, Phase::optimise);
  EXPECT_EQ(back->generation, 2);
  EXPECT_EQ(back->plan_id, plan_id);
  EXPECT_EQ(back->plan, "1. tile the K loop by 512");
  auto scored = store->find_sample(SampleKey{run, "8p", "autocomp", 3, 3});
  EXPECT_EQ(scored->role, SampleRole::score);
  EXPECT_EQ(scored->score, 8.5);

  EXPECT_EQ(store->samples(run).size(), 4u);
  // Only code and repair samples are candidates, and only they are judged.
  ASSERT_EQ(store->candidates(run).size(), 2u);
  EXPECT_THROW(store->put_evaluation(evaluation(plan_id, Verdict::correct)), StoreError);
  EXPECT_TRUE(store->put_evaluation(evaluation(code_id, Verdict::correct)));

  // Listings without texts carry hashes, not megabytes.
  auto light = store->samples(run, RunStore::Texts::none);
  EXPECT_EQ(light[2].plan, "");
  EXPECT_EQ(light[2].prompt_system, "");
  EXPECT_EQ(light[2].code_hash, sha256_hex(code.code));
}

TEST(RunStoreTest, TextsAreStoredOnceEach) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const std::string baseline(10000, 'b');  // the module every prompt quotes
  for (int i = 0; i < 20; ++i) {
    SampleRecord s = sample(run, i, "same code\n");
    s.prompt_system = baseline;
    store->put_sample(s);
  }
  Raw raw(tmp.path());
  // system, 20 user prompts, one response, one code, the empty plan.
  EXPECT_EQ(raw.text("SELECT count(*) FROM blobs"), "24");
  EXPECT_EQ(raw.text("SELECT count(*) FROM blobs WHERE bytes = 10000"), "1");
  EXPECT_EQ(store->blob(sha256_hex(baseline)), baseline);
  EXPECT_EQ(store->put_blob(baseline), sha256_hex(baseline));
  EXPECT_FALSE(store->blob(sha256_hex("never stored")).has_value());
  // The candidates view gives people and tests the texts back.
  EXPECT_EQ(raw.text("SELECT count(*) FROM candidates WHERE code = 'same code\n'"), "20");
}

TEST(RunStoreTest, ForeignKeysAreEnforced) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  EXPECT_THROW(store->put_sample(sample(/*run_id=*/42, 0)), StoreError);
  EXPECT_THROW(store->put_evaluation(evaluation(77, Verdict::correct)), StoreError);
  const int64_t run = store->begin_or_resume_run("r", "c");
  SampleRecord orphan = sample(run, 0);
  orphan.parent_id = 555;
  try {
    store->put_sample(orphan);
    ADD_FAILURE() << "an unknown parent was accepted";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("sample 0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store->candidates(run).empty());
  EXPECT_TRUE(store->evaluations(run).empty());
}

TEST(RunStoreTest, EvaluationPutIsIdempotent) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->put_sample(sample(run, 0)).id;

  EXPECT_FALSE(store->find_evaluation(cid).has_value());
  EvaluationRecord first = evaluation(cid, Verdict::correct);
  first.evaluation.seeds = {123456789012345, 7};
  first.agent.libtpu_version = "0.0.42.1";
  first.agent.jax_version = "0.10.2";
  first.agent.device_kind = "TPU v6e";
  first.agent.agent_key = "curve:abcd";
  first.evaluation.outside_pallas_fraction = 0.02;
  first.structure_json = R"({"pallas_calls":2})";
  first.evaluation.numerics_path = NumericsPath::mosaic_interpreter;
  EXPECT_TRUE(store->put_evaluation(first));
  EXPECT_FALSE(store->put_evaluation(evaluation(cid, Verdict::numerics_mismatch)));

  auto e = store->find_evaluation(cid);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(e->evaluation.stage, Stage::done);
  EXPECT_EQ(e->evaluation.stdout_text, "out");
  EXPECT_EQ(e->evaluation.stderr_text, "err");
  EXPECT_EQ(e->evaluation.stage_ms, (std::map<std::string, double>{{"lint", 1.5}, {"numerics", 200.25}}));
  EXPECT_EQ(e->evaluation.max_abs_err, 0.5);
  EXPECT_EQ(e->evaluation.max_rel_err, 0.01);
  EXPECT_EQ(e->evaluation.kernel_ms, 2.0);
  EXPECT_EQ(e->evaluation.baseline_ms, 3.0);
  EXPECT_EQ(e->speedup, 1.5);
  EXPECT_EQ(e->evaluation.timing_kind, TimingKind::cpu_wall);
  EXPECT_EQ(e->agent.agent_id, "agent-1");
  EXPECT_EQ(e->agent.agent_key, "curve:abcd");
  EXPECT_EQ(e->agent.backend, "interpret");
  EXPECT_EQ(e->agent.dispatches, 2);
  EXPECT_EQ(e->evaluation.seeds, (std::vector<int64_t>{123456789012345, 7}));
  EXPECT_EQ(e->agent.libtpu_version, "0.0.42.1");
  EXPECT_EQ(e->agent.jax_version, "0.10.2");
  EXPECT_EQ(e->agent.device_kind, "TPU v6e");
  EXPECT_EQ(e->evaluation.outside_pallas_fraction, 0.02);
  EXPECT_EQ(e->structure_json, R"({"pallas_calls":2})");
  EXPECT_EQ(e->evaluation.numerics_path, NumericsPath::mosaic_interpreter);
  EXPECT_EQ(store->evaluations(run).size(), 1u);
}

// The row is the evaluation, the agent facts and the check findings beside it: every field the
// judge found is stored, the speedup is computed from the times, and the dispatch count is what
// really happened.
TEST(RunStoreTest, ARowIsWrittenFromTheEvaluationAndTheAgentFacts) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->put_sample(sample(run, 0)).id;
  Evaluation e;
  e.verdict = Verdict::correct;
  e.stage = Stage::done;
  e.kernel_ms = 2.0;
  e.baseline_ms = 5.0;
  e.timing_kind = TimingKind::tpu_profiler;
  e.numerics_path = NumericsPath::tpu;
  e.seeds = {4242, 17};
  e.timing_runs = 9;
  e.kernel_ms_high = 2.5;
  e.numerics_ok = true;
  e.structure_ok = false;
  e.dtype_exact = false;
  e.compile_finding = "libtpu: scoped VMEM limit exceeded";
  AgentFacts agent;
  agent.agent_key = "Z85-public-key";
  agent.agent_id = "tpu-host-3";
  agent.backend = "tpu";
  agent.device_kind = "TPU v6 lite";
  agent.jax_version = "0.10.2";
  agent.libtpu_version = "0.0.42.1";
  agent.dispatches = 0;  // never passed a dispatcher: it still took one
  CheckFindings checks;
  checks.plausibility = "retimed";
  checks.retiming_json = R"({"first":{"kernel_ms":0.2}})";
  checks.cross_check_json = R"({"agreement":"agree"})";
  ASSERT_TRUE(store->put_evaluation(cid, Evaluated{e, agent, checks, std::nullopt}));
  auto back = store->find_evaluation(cid);
  ASSERT_TRUE(back.has_value());
  const Evaluation& b = back->evaluation;
  EXPECT_EQ(b.verdict, Verdict::correct);
  EXPECT_EQ(b.stage, Stage::done);
  EXPECT_EQ(b.timing_kind, TimingKind::tpu_profiler);
  EXPECT_EQ(b.numerics_path, NumericsPath::tpu);
  EXPECT_EQ(b.seeds, e.seeds);
  EXPECT_EQ(b.timing_runs, 9);
  EXPECT_EQ(b.kernel_ms_high, 2.5);
  EXPECT_FALSE(b.kernel_ms_low.has_value());
  EXPECT_EQ(b.numerics_ok, std::optional<bool>(true));
  EXPECT_EQ(b.structure_ok, std::optional<bool>(false));
  EXPECT_EQ(b.dtype_exact, std::optional<bool>(false));
  EXPECT_EQ(b.compile_finding, e.compile_finding);
  EXPECT_EQ(back->speedup, 2.5);
  EXPECT_EQ(back->agent.agent_key, "Z85-public-key");
  EXPECT_EQ(back->agent.agent_id, "tpu-host-3");
  EXPECT_EQ(back->agent.device_kind, "TPU v6 lite");
  EXPECT_EQ(back->agent.dispatches, 1);
  EXPECT_EQ(back->checks.plausibility, "retimed");
  EXPECT_EQ(back->checks.retiming_json, checks.retiming_json);
  EXPECT_EQ(back->checks.cross_check_json, checks.cross_check_json);

  // A wrong answer has no speedup, whatever its times say; an unreached stage stays absent.
  const int64_t other = store->put_sample(sample(run, 1)).id;
  Evaluation timeout;
  timeout.verdict = Verdict::timeout;
  timeout.kernel_ms = 1.0;
  timeout.baseline_ms = 9.0;
  agent.dispatches = 3;
  timeout.compile_finding = "";  // the compile tier ran and found nothing
  ASSERT_TRUE(store->put_evaluation(other, Evaluated{timeout, agent, {}, std::nullopt}));
  back = store->find_evaluation(other);
  EXPECT_FALSE(back->speedup.has_value());
  EXPECT_FALSE(back->evaluation.stage.has_value());
  EXPECT_FALSE(back->evaluation.numerics_ok.has_value());
  EXPECT_EQ(back->evaluation.compile_finding, std::optional<std::string>(""))
      << "found nothing is not the same as never ran";
  EXPECT_EQ(back->checks.plausibility, "");
  EXPECT_EQ(back->checks.cross_check_json, "{}");
  EXPECT_EQ(back->agent.dispatches, 3);
}

// A row whose spelling this build does not know is a corrupt store, named, not a guess.
TEST(RunStoreTest, AnUnknownStageInARowIsRefusedNamingIt) {
  TempDb tmp;
  int64_t cid = 0;
  {
    auto store = RunStore::open(tmp.path());
    const int64_t run = store->begin_or_resume_run("r", "c");
    cid = store->put_sample(sample(run, 0)).id;
    ASSERT_TRUE(store->put_evaluation(evaluation(cid, Verdict::correct)));
  }
  {
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    raw.exec("UPDATE evaluations SET stage = 'polishing'");
  }
  auto store = RunStore::open(tmp.path());
  try {
    store->find_evaluation(cid);
    FAIL() << "read a row with an unknown stage";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown stage 'polishing'"), std::string::npos)
        << e.what();
  }
}

TEST(RunStoreTest, NullableNumbersStayNull) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t cid = store->put_sample(sample(run, 0, "")).id;
  EvaluationRecord e;
  e.candidate_id = cid;
  e.evaluation.verdict = Verdict::no_code;
  e.evaluation.stage = Stage::extract;
  ASSERT_TRUE(store->put_evaluation(e));
  auto back = store->find_evaluation(cid);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->evaluation.verdict, Verdict::no_code);
  EXPECT_FALSE(back->evaluation.kernel_ms.has_value());
  EXPECT_FALSE(back->speedup.has_value());
  EXPECT_FALSE(back->evaluation.max_abs_err.has_value());
  EXPECT_FALSE(back->evaluation.outside_pallas_fraction.has_value());
  EXPECT_TRUE(back->evaluation.seeds.empty());
  EXPECT_TRUE(back->evaluation.stage_ms.empty());
}

TEST(RunStoreTest, LlmCallsAreAppended) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  LlmCallRecord call;
  call.run_id = run;
  call.provider = "gemini";
  call.model = "gemini-3-flash";
  call.role = SampleRole::plan;
  call.samples = 4;
  call.prompt_tokens = 120;
  call.completion_tokens = 340;
  call.thinking_tokens = 900;
  call.latency_ms = 0.25;
  call.cost_usd = 0.01;
  const int64_t first = store->put_llm_call(call);
  LlmCallRecord failed = call;
  failed.status = "error";
  failed.error_code = "resource_exhausted";
  failed.http_status = 429;
  failed.cost_usd.reset();
  EXPECT_NE(store->put_llm_call(failed), first);
  failed.status = "maybe";
  EXPECT_THROW(store->put_llm_call(failed), StoreError);
  LlmCallRecord unknown_run = call;
  unknown_run.run_id = 99;
  EXPECT_THROW(store->put_llm_call(unknown_run), StoreError);

  const auto calls = store->llm_calls(run);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].id, first);
  EXPECT_EQ(calls[0].role, SampleRole::plan);
  EXPECT_EQ(calls[0].samples, 4);
  EXPECT_EQ(calls[0].prompt_tokens, 120);
  EXPECT_EQ(calls[0].completion_tokens, 340);
  EXPECT_EQ(calls[0].thinking_tokens, 900);
  EXPECT_EQ(calls[0].latency_ms, 0.25);
  EXPECT_EQ(calls[0].cost_usd, 0.01);
  EXPECT_EQ(calls[1].status, "error");
  EXPECT_EQ(calls[1].error_code, "resource_exhausted");
  EXPECT_EQ(calls[1].http_status, 429);
  EXPECT_FALSE(calls[1].cost_usd.has_value());
}

TEST(RunStoreTest, ARunsModelsAreItsCallsThenTheCachedAnswersItsCandidatesHold) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t first = store->begin_or_resume_run("cell a", "ca");
  const int64_t second = store->begin_or_resume_run("cell b", "cb");
  LlmCallRecord call;
  call.run_id = first;
  call.provider = "openai";
  call.model = "gpt-x";
  const auto put = store->put_answered_call(call, {response("user 0")});
  SampleRecord paid = sample(first, 0);
  paid.prompt_user = "user 0";
  paid.response_id = put.responses[0].id;
  store->put_sample(paid);
  // Cell b pays for one call of its own and reuses cell a's answer.
  LlmCallRecord own = call;
  own.run_id = second;
  own.model = "local";
  store->put_llm_call(own);
  SampleRecord reuse = sample(second, 0);
  reuse.prompt_user = "user 0";
  reuse.response_id = put.responses[0].id;
  store->put_sample(reuse);

  EXPECT_EQ(store->models(first), std::vector<std::string>{"gpt-x"});
  EXPECT_EQ(store->models(second), (std::vector<std::string>{"local", "gpt-x"}));
  EXPECT_TRUE(store->models(store->begin_or_resume_run("cell c", "cc")).empty());
}

TEST(RunStoreTest, ACallIsStoredWithItsAnswersOrNotAtAll) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  LlmCallRecord call;
  call.run_id = run;
  call.provider = "openai";
  call.model = "gpt-x";
  call.samples = 2;
  const auto put = store->put_answered_call(call, {response("A"), response("A", 1)});
  ASSERT_EQ(put.responses.size(), 2u);
  EXPECT_TRUE(put.responses[0].inserted && put.responses[1].inserted);
  EXPECT_EQ(store->find_response(put.responses[1].id)->call_id, put.call_id);

  // A second call that answers a key already cached is still a row; the first answer stays.
  const auto again = store->put_answered_call(call, {response("A")});
  EXPECT_FALSE(again.responses[0].inserted);
  EXPECT_EQ(again.responses[0].id, put.responses[0].id);
  EXPECT_EQ(store->llm_calls(run).size(), 2u);

  // An answer the file refuses (a trigger, after the call's row is written) takes its call
  // with it: a paid call is never on disk without the answers a resume would reuse.
  {
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    raw.exec(
        "CREATE TRIGGER refuse BEFORE INSERT ON llm_responses WHEN NEW.sample_index = 7 "
        "BEGIN SELECT RAISE(ABORT, 'no'); END");
  }
  EXPECT_THROW(store->put_answered_call(call, {response("B"), response("B", 7)}), StoreError);
  EXPECT_EQ(store->llm_calls(run).size(), 2u);
  EXPECT_FALSE(store->find_response(response("B").key()).has_value());
}

TEST(RunStoreTest, AttributionChargesACachedAnswerToTheRunThatPaidAndCountsCutOffAnswers) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t first = store->begin_or_resume_run("cell a", "ca");
  const int64_t second = store->begin_or_resume_run("cell b", "cb");
  LlmCallRecord call;
  call.run_id = first;
  call.provider = "openai";
  call.model = "gpt-x";
  LlmResponseRecord cut = response("user 1", 1);
  cut.finish_reason = "length";
  cut.cached_prompt_tokens = 768;
  const auto put = store->put_answered_call(call, {response("user 0"), cut});
  // Cell a asked both; cell b asks sample 0's prompt again and reuses the stored answer.
  for (int k = 0; k < 2; ++k) {
    SampleRecord s = sample(first, k);
    s.prompt_user = "user " + std::to_string(k);
    s.response_id = put.responses[static_cast<size_t>(k)].id;
    store->put_sample(s);
  }
  SampleRecord reuse = sample(second, 0);
  reuse.prompt_user = "user 0";
  reuse.response_id = put.responses[0].id;
  store->put_sample(reuse);

  const auto a = store->llm_attribution(first);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].workload, "8p");
  EXPECT_EQ(a[0].paid_answers, 2);
  EXPECT_EQ(a[0].reused_answers, 0);
  EXPECT_EQ(a[0].paid_prompt_tokens, 2000);
  EXPECT_EQ(a[0].paid_output_tokens, 500);
  EXPECT_NEAR(a[0].paid_usd, 0.0084, 1e-12);
  EXPECT_EQ(a[0].cached_prompt_tokens, 768);
  EXPECT_EQ(a[0].truncated, 1);
  const auto b = store->llm_attribution(second);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].paid_answers, 0);
  EXPECT_EQ(b[0].reused_answers, 1);
  EXPECT_EQ(b[0].reused_prompt_tokens, 1000);
  EXPECT_NEAR(b[0].reused_usd, 0.0042, 1e-12);  // what it would have cost alone
  EXPECT_DOUBLE_EQ(b[0].paid_usd, 0.0);
}

TEST(RunStoreTest, TheResponseCacheIsKeyedByWhatDeterminesAnAnswer) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const PutResponseResult put = store->put_response(response("prompt A"));
  EXPECT_TRUE(put.inserted);
  // The first answer under a key wins.
  LlmResponseRecord other = response("prompt A");
  other.text = "a different answer";
  EXPECT_EQ(store->put_response(other).id, put.id);
  EXPECT_FALSE(store->put_response(other).inserted);

  const LlmResponseRecord base = response("prompt A");
  auto hit = store->find_response(base.key());
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->id, put.id);
  EXPECT_EQ(hit->text, base.text);
  EXPECT_EQ(hit->prompt_user, "prompt A");
  EXPECT_EQ(hit->model_reported, "gpt-x-2025");
  EXPECT_EQ(hit->finish_reason, "stop");
  EXPECT_EQ(hit->thinking_tokens, 50);
  EXPECT_EQ(hit->cost_usd, 0.0042);
  EXPECT_EQ(hit->prompt_hash, prompt_hash("system", "prompt A"));
  EXPECT_EQ(hit->params_hash, sha256_hex(R"({"temperature":0.7})"));
  EXPECT_EQ(store->find_response(put.id)->text, base.text);
  EXPECT_EQ(response_key("openai", "gpt-x", "system", "prompt A", R"({"temperature":0.7})", 0, 3)
                .prompt_hash,
            hit->prompt_hash);

  // Each part of the key misses when it differs.
  auto miss = [&](auto change) {
    LlmResponseRecord r = response("prompt A");
    change(r);
    return !store->find_response(r.key()).has_value();
  };
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.provider = "gemini"; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.model = "gpt-y"; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.prompt_user = "prompt B"; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.prompt_system = "system!"; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.params_json = R"({"temperature":1.0})"; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.sample_index = 1; }));
  EXPECT_TRUE(miss([](LlmResponseRecord& r) { r.seed = 4; }));
}

TEST(RunStoreTest, AGeneratedSampleIsStoredWithItsCallAndCachedResponse) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  LlmCallRecord call;
  call.run_id = run;
  call.provider = "openai";
  call.model = "gpt-x";
  LlmResponseRecord r = response("user 0");
  const PutSampleResult put = store->put_generated_sample(sample(run, 0), call, r);
  EXPECT_TRUE(put.inserted);
  auto s = store->find_sample(put.id);
  ASSERT_TRUE(s->response_id.has_value());
  auto cached = store->find_response(*s->response_id);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->call_id, store->llm_calls(run).at(0).id);

  // A failing part undoes the whole write: no call is left without its sample.
  SampleRecord bad = sample(run, 1);
  bad.parent_id = 999;
  EXPECT_THROW(store->put_generated_sample(bad, call, response("user 1")), StoreError);
  EXPECT_EQ(store->llm_calls(run).size(), 1u);
  EXPECT_FALSE(store->find_response(response("user 1").key()).has_value());
}

TEST(RunStoreTest, ABatchCommitsTogetherAndAFailedWriteUndoesOnlyItself) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  auto reader = RunStore::open(tmp.path(), RunStore::Mode::read_only);

  store->begin_batch();
  EXPECT_TRUE(store->in_batch());
  EXPECT_THROW(store->begin_batch(), StoreError);
  const int64_t a = store->put_sample(sample(run, 0)).id;
  EXPECT_THROW(store->put_evaluation(evaluation(9999, Verdict::correct)), StoreError);
  const int64_t b = store->put_sample(sample(run, 1)).id;
  // The writer sees its own batch; nobody else does before the commit.
  EXPECT_EQ(store->candidates(run).size(), 2u);
  EXPECT_EQ(reader->candidates(run).size(), 0u);
  store->commit_batch();
  EXPECT_FALSE(store->in_batch());
  ASSERT_EQ(reader->candidates(run).size(), 2u);
  EXPECT_EQ(reader->candidates(run)[0].id, a);
  EXPECT_EQ(reader->candidates(run)[1].id, b);

  store->begin_batch();
  store->put_sample(sample(run, 2));
  store->rollback_batch();
  EXPECT_EQ(store->candidates(run).size(), 2u);
  store->commit_batch();  // no batch: nothing to do
}

TEST(RunStoreTest, AColumnAddedToTheSchemaReachesAnExistingDatabase) {
  TempDb tmp;
  RunStore::open(tmp.path())->begin_or_resume_run("r", "c");
  {
    // An older build's table: the evaluations table without two columns.
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    raw.exec("ALTER TABLE evaluations DROP COLUMN structure_json");
    raw.exec("ALTER TABLE evaluations DROP COLUMN outside_pallas_flops_share");
    raw.exec("ALTER TABLE evaluations DROP COLUMN libtpu_version");
    raw.exec("ALTER TABLE evaluations DROP COLUMN numerics_path");
  }
  auto store = RunStore::open(tmp.path());
  const int64_t cid = store->put_sample(sample(1, 0)).id;
  EvaluationRecord e = evaluation(cid, Verdict::correct);
  e.evaluation.outside_pallas_fraction = 0.5;
  e.structure_json = R"({"x":1})";
  e.agent.libtpu_version = "0.0.42.1";
  e.evaluation.numerics_path = NumericsPath::tpu;
  ASSERT_TRUE(store->put_evaluation(e));
  auto back = store->find_evaluation(cid);
  EXPECT_EQ(back->evaluation.outside_pallas_fraction, 0.5);
  EXPECT_EQ(back->structure_json, R"({"x":1})");
  EXPECT_EQ(back->agent.libtpu_version, "0.0.42.1");
  EXPECT_EQ(back->evaluation.numerics_path, NumericsPath::tpu);
}

TEST(RunStoreTest, TimingSpreadAndPlausibilityRoundTripAndDefaultForOlderRows) {
  TempDb tmp;
  RunStore::open(tmp.path())->begin_or_resume_run("r", "c");
  {
    // A database written before the timing spread and the plausibility gate existed.
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    for (const char* c : {"timing_runs", "kernel_ms_low", "kernel_ms_high", "baseline_ms_low",
                          "baseline_ms_high", "plausibility", "retiming_json"})
      raw.exec(std::string("ALTER TABLE evaluations DROP COLUMN ") + c);
  }
  int64_t plain = 0;
  {
    // Written by the older build, before any newer build opened the file read-write.
    Raw raw(tmp.path(), SQLITE_OPEN_READWRITE);
    raw.exec("INSERT INTO blobs VALUES ('" + sha256_hex("") + "', 0, '')");
    raw.exec("INSERT INTO samples (run_id, workload, method, seed, sample_index, role, phase, "
             "generation, plan_hash, prompt_hash, system_hash, user_hash, response_hash, "
             "code_hash) VALUES (1, '8p', 'iterative', 0, 9, 'code', 'iterate', 1, '" +
             sha256_hex("") + "', 'p', '" + sha256_hex("") + "', '" + sha256_hex("") + "', '" +
             sha256_hex("") + "', '" + sha256_hex("") + "')");
    raw.exec("INSERT INTO evaluations (candidate_id, verdict, stage, error_text, "
             "error_signature, stdout, stderr, stage_ms_json, timing_kind, agent_id, backend, "
             "attempts) SELECT max(id), 'correct', 'done', '', '', '', '', '{}', 'cpu-wall', 'a', "
             "'interpret', 1 FROM samples");
  }
  {
    // A report opens it read-only, which never migrates: the new columns read their defaults.
    auto reader = RunStore::open(tmp.path(), RunStore::Mode::read_only);
    auto old = reader->evaluations(1);
    ASSERT_EQ(old.size(), 1u);
    EXPECT_EQ(old[0].evaluation.timing_runs, 1);
    EXPECT_FALSE(old[0].evaluation.kernel_ms_high.has_value());
    EXPECT_EQ(old[0].checks.plausibility, "");
    EXPECT_EQ(old[0].checks.retiming_json, "{}");
    EXPECT_FALSE(old[0].evaluation.compile_finding.has_value());
  }
  auto store = RunStore::open(tmp.path());
  plain = store->put_sample(sample(1, 0)).id;
  ASSERT_TRUE(store->put_evaluation(evaluation(plain, Verdict::correct)));
  auto back = store->find_evaluation(plain);
  EXPECT_EQ(back->evaluation.timing_runs, 1);
  EXPECT_FALSE(back->evaluation.kernel_ms_low.has_value());
  EXPECT_EQ(back->checks.plausibility, "");
  EXPECT_EQ(back->checks.retiming_json, "{}");

  const int64_t cid = store->put_sample(sample(1, 1)).id;
  EvaluationRecord e = evaluation(cid, Verdict::correct);
  e.evaluation.timing_runs = 7;
  e.evaluation.kernel_ms_low = 1.9;
  e.evaluation.kernel_ms_high = 2.2;
  e.evaluation.baseline_ms_low = 2.8;
  e.evaluation.baseline_ms_high = 3.3;
  e.checks.plausibility = "implausible_speed";
  e.checks.retiming_json = R"({"first":{"kernel_ms":2.0},"second":{"kernel_ms":2.1}})";
  ASSERT_TRUE(store->put_evaluation(e));
  back = store->find_evaluation(cid);
  EXPECT_EQ(back->evaluation.timing_runs, 7);
  EXPECT_EQ(back->evaluation.kernel_ms_low, 1.9);
  EXPECT_EQ(back->evaluation.kernel_ms_high, 2.2);
  EXPECT_EQ(back->evaluation.baseline_ms_low, 2.8);
  EXPECT_EQ(back->evaluation.baseline_ms_high, 3.3);
  EXPECT_EQ(back->checks.plausibility, "implausible_speed");
  EXPECT_EQ(back->checks.retiming_json, e.checks.retiming_json);
}

TEST(RunStoreTest, ReopenAfterCloseKeepsEverything) {
  TempDb tmp;
  int64_t run = 0;
  int64_t cid = 0;
  {
    auto store = RunStore::open(tmp.path());
    run = store->begin_or_resume_run("r", "config v1");
    cid = store->put_sample(sample(run, 0)).id;
    ASSERT_TRUE(store->put_evaluation(evaluation(cid, Verdict::correct)));
  }
  auto store = RunStore::open(tmp.path());
  EXPECT_EQ(store->latest_run_id(), run);
  EXPECT_EQ(store->begin_or_resume_run("r", "config v1"), run);
  // The resumed run finds what it paid for and writes nothing twice.
  EXPECT_EQ(store->put_sample(sample(run, 0)).id, cid);
  EXPECT_FALSE(store->put_evaluation(evaluation(cid, Verdict::crash)));
  EXPECT_EQ(store->find_evaluation(cid)->evaluation.verdict, Verdict::correct);
  EXPECT_EQ(store->candidates(run).size(), 1u);
}

TEST(RunStoreTest, QueriesAreScopedToTheRun) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t r1 = store->begin_or_resume_run("a", "1");
  const int64_t r2 = store->begin_or_resume_run("b", "2");
  const int64_t c1 = store->put_sample(sample(r1, 0)).id;
  const int64_t c2 = store->put_sample(sample(r2, 0)).id;
  EXPECT_NE(c1, c2);  // same key apart from run_id
  store->put_evaluation(evaluation(c1, Verdict::correct));
  store->put_evaluation(evaluation(c2, Verdict::timeout));
  ASSERT_EQ(store->evaluations(r1).size(), 1u);
  EXPECT_EQ(store->evaluations(r1)[0].candidate_id, c1);
  ASSERT_EQ(store->candidates(r2).size(), 1u);
  EXPECT_EQ(store->candidates(r2)[0].id, c2);
}

// Issue 21 item 6: a quarantined key's results are traceable and marked for re-evaluation,
// in every run of the database, and so is a result it sends after the quarantine; a resumed
// search does not reuse them, and the new evaluation replaces the marked row (and only a
// marked row: the first write still wins otherwise).
TEST(RunStoreTest, AQuarantinedKeysResultsAreMarkedNotReusedAndReplaced) {
  TempDb tmp;
  auto store = RunStore::open(tmp.path());
  const int64_t run = store->begin_or_resume_run("r", "c");
  const int64_t forged = store->put_sample(sample(run, 0)).id;
  const int64_t honest = store->put_sample(sample(run, 1)).id;
  const int64_t late = store->put_sample(sample(run, 2)).id;
  EvaluationRecord f = evaluation(forged, Verdict::correct);
  f.agent.agent_key = "KEY-F";
  f.checks.cross_check_json = R"({"agreement":"unchecked: no other slot could take it"})";
  ASSERT_TRUE(store->put_evaluation(f));
  EvaluationRecord h = evaluation(honest, Verdict::numerics_mismatch);
  h.agent.agent_key = "KEY-H";
  ASSERT_TRUE(store->put_evaluation(h));
  EXPECT_FALSE(store->find_evaluation(forged)->needs_reevaluation);
  EXPECT_EQ(store->find_evaluation(forged)->checks.cross_check_json, f.checks.cross_check_json);

  QuarantineRecord q;
  q.run_id = run;
  q.agent_key = "KEY-F";
  q.agent_id = "forger";
  q.reason = "claimed correct for job 9 where agent h found numerics_mismatch";
  q.job_id = 9;
  EXPECT_EQ(store->put_quarantine(q), 1) << "its one stored result is marked";
  EXPECT_EQ(store->put_quarantine(q), 0) << "once per run and key";
  EXPECT_TRUE(store->find_evaluation(forged)->needs_reevaluation);
  EXPECT_FALSE(store->find_evaluation(honest)->needs_reevaluation);

  // A result the key sent while the quarantine was on its way is marked as it is written.
  EvaluationRecord l = evaluation(late, Verdict::correct);
  l.agent.agent_key = "KEY-F";
  ASSERT_TRUE(store->put_evaluation(l));
  EXPECT_TRUE(store->find_evaluation(late)->needs_reevaluation);

  auto listed = store->quarantines();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].agent_key, "KEY-F");
  EXPECT_EQ(listed[0].agent_id, "forger");
  EXPECT_EQ(listed[0].job_id, 9);
  EXPECT_EQ(listed[0].evaluations, 2) << "traceable: every result the key sent";

  SampleKey key{run, "8p", "iterative", 3, 0};
  auto loaded = store->search_samples(key);
  ASSERT_EQ(loaded.evaluations.size(), 1u) << "the marked ones are evaluated again on resume";
  EXPECT_EQ(loaded.evaluations[0].candidate_id, honest);

  EvaluationRecord again = evaluation(forged, Verdict::numerics_mismatch);
  again.agent.agent_key = "KEY-H";
  EXPECT_TRUE(store->put_evaluation(again)) << "replaces the marked row";
  auto now = store->find_evaluation(forged);
  EXPECT_EQ(now->evaluation.verdict, Verdict::numerics_mismatch);
  EXPECT_EQ(now->agent.agent_key, "KEY-H");
  EXPECT_FALSE(now->needs_reevaluation);
  EXPECT_FALSE(store->put_evaluation(evaluation(forged, Verdict::correct)))
      << "an unmarked row stays: the first write wins";
  EXPECT_EQ(store->find_evaluation(forged)->evaluation.verdict, Verdict::numerics_mismatch);
}

}  // namespace
}  // namespace palladium
