-- Palladium run store, schema version 1 (PRAGMA user_version).
--
-- The one source of truth: store/CMakeLists.txt embeds this file into the
-- binary and RunStore::open() runs it on every open, so every statement must
-- be idempotent (IF NOT EXISTS). Times are ISO-8601 UTC text.
--
-- Idempotence keys: a candidate is unique on (run_id, workload, method, seed,
-- sample_index) and an evaluation on candidate_id, so a resumed run finds
-- what it already paid for and writes nothing twice.

CREATE TABLE IF NOT EXISTS runs (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  config_text  TEXT NOT NULL,
  config_hash  TEXT NOT NULL,   -- fnv1a64 hex of config_text
  started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at  TEXT,
  status       TEXT NOT NULL DEFAULT 'running'
);
CREATE INDEX IF NOT EXISTS runs_by_config_hash ON runs(config_hash);

CREATE TABLE IF NOT EXISTS candidates (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  workload      TEXT NOT NULL,
  method        TEXT NOT NULL,
  seed          INTEGER NOT NULL,
  sample_index  INTEGER NOT NULL,
  parent_id     INTEGER REFERENCES candidates(id),
  prompt_system TEXT NOT NULL,
  prompt_user   TEXT NOT NULL,
  response      TEXT NOT NULL,
  code          TEXT NOT NULL,   -- '' when the response had no code
  code_hash     TEXT NOT NULL,   -- fnv1a64 hex of code
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (run_id, workload, method, seed, sample_index)
);

CREATE TABLE IF NOT EXISTS evaluations (
  id              INTEGER PRIMARY KEY,
  candidate_id    INTEGER NOT NULL UNIQUE REFERENCES candidates(id),
  verdict         TEXT NOT NULL,  -- search/verdict.hpp spelling
  stage           TEXT NOT NULL,
  error_text      TEXT NOT NULL,
  error_signature TEXT NOT NULL,
  stdout          TEXT NOT NULL,
  stderr          TEXT NOT NULL,
  stage_ms_json   TEXT NOT NULL,  -- {"stage": ms, ...}
  max_abs_err     REAL,
  max_rel_err     REAL,
  kernel_ms       REAL,
  baseline_ms     REAL,
  speedup         REAL,           -- baseline_ms / kernel_ms, correct only
  timing_kind     TEXT NOT NULL,  -- 'cpu-wall', 'tpu-profiler', 'tpu-wall-fallback' or ''
  agent_id        TEXT NOT NULL,
  backend         TEXT NOT NULL,
  attempts        INTEGER NOT NULL,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE IF NOT EXISTS llm_calls (
  id                INTEGER PRIMARY KEY,
  run_id            INTEGER NOT NULL REFERENCES runs(id),
  candidate_id      INTEGER REFERENCES candidates(id),  -- NULL if the call failed
  provider          TEXT NOT NULL,
  model             TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  tokens_estimated  INTEGER NOT NULL,  -- 0 or 1
  latency_ms        REAL NOT NULL,
  created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX IF NOT EXISTS llm_calls_by_run ON llm_calls(run_id);
