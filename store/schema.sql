-- Palladium run store, schema version 3 (PRAGMA user_version = 3,
-- PRAGMA application_id = 0x50414C44, "PALD").
--
-- The one source of truth: store/CMakeLists.txt embeds this file into the
-- binary. RunStore::open() runs it when it creates a database and on every
-- read-write open, so every statement must be idempotent (IF NOT EXISTS). A
-- column added to a CREATE TABLE below reaches existing databases by itself:
-- open() compares each table with this file and ALTERs in the missing
-- columns, so a new column must be nullable or carry a DEFAULT; its C++ side
-- is its record's member and its line in the table's column list, both in
-- store/<table>_table.hpp. Anything
-- else (a renamed or dropped column, a new constraint, values an older row
-- must be given) needs a new user_version and its step in
-- store/database.cpp's migrate(). Version 2 -> 3: runs and cells got method,
-- model and suite_json, filled from each row's config_text.
--
-- Times are ISO-8601 UTC text. Hashes are SHA-256 as 64 lowercase hex
-- digits (store/content_hash.hpp).
--
-- Text is content-addressed: prompts, responses, code and plans live once
-- each in `blobs`, and rows name them by hash (the empty text is a blob too,
-- so these references are never NULL). A baseline module quoted in every
-- prompt of a run costs its size once.
--
-- Idempotence keys (a resumed run finds what it already paid for and writes
-- nothing twice; the first write wins, content is not compared):
--   runs          (config_hash, cell_id)
--   sweeps        config_hash;  cells (sweep_id, cell_key)
--   samples       (run_id, workload, method, seed, sample_index) among the
--                 live (not superseded) rows, with the same prompt_hash; a
--                 different prompt at that key supersedes the old row
--   evaluations   candidate_id
--   llm_responses (provider, model, prompt_hash, params_hash, sample_index,
--                 seed): the LLM cache, shared by every run and cell here
--   llm_calls     none: every paid call is a row of its own

CREATE TABLE IF NOT EXISTS blobs (
  hash   TEXT PRIMARY KEY,   -- sha256_hex(text)
  bytes  INTEGER NOT NULL,   -- length of text in bytes
  text   TEXT NOT NULL
);

-- A sweep (issue 10): one grid over run configs. Its cells are the grid's
-- points; each cell's run is a row of `runs` with that cell_id.
CREATE TABLE IF NOT EXISTS sweeps (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  config_text  TEXT NOT NULL,
  config_hash  TEXT NOT NULL UNIQUE,
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE IF NOT EXISTS cells (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
  cell_key     TEXT NOT NULL,    -- the stable id the grid expansion gives it
  ordinal      INTEGER NOT NULL, -- position in the expanded grid
  params_json  TEXT NOT NULL,    -- the grid point, e.g. {"method": "autocomp"}
  config_text  TEXT NOT NULL,    -- the cell's whole run config
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- What reports name the cell by, read once from config_text (store/run_identity.hpp): its
  -- method, its model label ('replay', 'synthetic', 'hand_tuned' or llm.model) and its suite
  -- (a JSON list of workload ids).
  method       TEXT NOT NULL DEFAULT '',
  model        TEXT NOT NULL DEFAULT '',
  suite_json   TEXT NOT NULL DEFAULT '[]',
  UNIQUE (sweep_id, cell_key)
);

-- status: 'running' while a process holds the database's lock for it, then
-- one of 'finished', 'incomplete', 'interrupted', 'failed', 'stopped'
-- (RunStore::finish_run); status_reason says why in words.
CREATE TABLE IF NOT EXISTS runs (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  config_text    TEXT NOT NULL,
  config_hash    TEXT NOT NULL,  -- sha256_hex(config_text)
  cell_id        INTEGER REFERENCES cells(id),  -- NULL outside a sweep
  started_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at    TEXT,
  status         TEXT NOT NULL DEFAULT 'running',
  status_reason  TEXT NOT NULL DEFAULT '',
  -- As for cells: the run's method, model label and suite, from config_text.
  method         TEXT NOT NULL DEFAULT '',
  model          TEXT NOT NULL DEFAULT '',
  suite_json     TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS runs_by_config_hash ON runs(config_hash);
CREATE INDEX IF NOT EXISTS runs_by_cell ON runs(cell_id);

-- Every LLM request that was sent (and so may be billed), failed ones too.
-- One call may return several responses (n samples); its usage is the
-- API's own, for the whole call.
CREATE TABLE IF NOT EXISTS llm_calls (
  id                 INTEGER PRIMARY KEY,
  run_id             INTEGER REFERENCES runs(id),  -- NULL: served several runs
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,
  role               TEXT NOT NULL,      -- taxonomy sample_roles
  samples            INTEGER NOT NULL,   -- responses asked for (n)
  status             TEXT NOT NULL,      -- 'ok' or 'error'
  error_code         TEXT NOT NULL,      -- protocol/errc.hpp spelling, '' if ok
  error_text         TEXT NOT NULL,
  http_status        INTEGER NOT NULL,   -- 0 when not HTTP
  prompt_tokens      INTEGER NOT NULL,
  completion_tokens  INTEGER NOT NULL,
  thinking_tokens    INTEGER NOT NULL,
  tokens_estimated   INTEGER NOT NULL,   -- 1 when not the API's own counts
  latency_ms         REAL NOT NULL,
  cost_usd           REAL,               -- NULL when no price is known
  batch_id           TEXT NOT NULL,      -- provider batch job, '' online
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- Of prompt_tokens, those the provider served from its prompt cache (billed
  -- at the cached rate), and the dollars that saved against the input price.
  cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,
  cache_saved_usd    REAL,
  -- Palladium's own estimate of the prompt (characters / 4): a server that
  -- reports far fewer prompt_tokens did not see the whole prompt.
  prompt_estimate    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS llm_calls_by_run ON llm_calls(run_id);

-- The LLM response cache and the record of the experiment: every answer,
-- keyed by what determines it. sample_index tells repeated answers to one
-- prompt apart. Usage columns are this response's share of its call.
CREATE TABLE IF NOT EXISTS llm_responses (
  id                 INTEGER PRIMARY KEY,
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,      -- the model asked for
  prompt_hash        TEXT NOT NULL,      -- prompt_hash(system, user)
  params_hash        TEXT NOT NULL,      -- sha256_hex(params_json)
  sample_index       INTEGER NOT NULL,
  seed               INTEGER NOT NULL,
  params_json        TEXT NOT NULL,      -- canonical sampling parameters
  system_hash        TEXT NOT NULL REFERENCES blobs(hash),
  user_hash          TEXT NOT NULL REFERENCES blobs(hash),
  response_hash      TEXT NOT NULL REFERENCES blobs(hash),
  model_reported     TEXT NOT NULL,      -- the model as the API named it
  finish_reason      TEXT NOT NULL,      -- e.g. 'stop', 'length'; '' unknown
  prompt_tokens      INTEGER NOT NULL,
  completion_tokens  INTEGER NOT NULL,
  thinking_tokens    INTEGER NOT NULL,
  tokens_estimated   INTEGER NOT NULL,
  latency_ms         REAL NOT NULL,
  cost_usd           REAL,
  batch_id           TEXT NOT NULL,
  call_id            INTEGER REFERENCES llm_calls(id),
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,  -- share of the call's cached tokens
  UNIQUE (provider, model, prompt_hash, params_hash, sample_index, seed)
);

-- One row per request a search made: code and repair samples are the
-- candidates (the unit of per-sample correctness); plan, score and menu
-- samples are the rest. role and phase are protocol/taxonomy.json
-- spellings. A superseded row is history: its prompt changed on resume and
-- a newer row holds its key; reports and lookups ignore it.
CREATE TABLE IF NOT EXISTS samples (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  workload       TEXT NOT NULL,
  method         TEXT NOT NULL,
  seed           INTEGER NOT NULL,
  sample_index   INTEGER NOT NULL,
  role           TEXT NOT NULL,
  phase          TEXT NOT NULL,
  generation     INTEGER NOT NULL,   -- the method's step (beam iteration)
  parent_id      INTEGER REFERENCES samples(id),  -- built on or judged
  plan_id        INTEGER REFERENCES samples(id),  -- the plan implemented
  plan_hash      TEXT NOT NULL REFERENCES blobs(hash),  -- that plan's text
  score          REAL,               -- role 'score': the rating it gave
  prompt_hash    TEXT NOT NULL,      -- prompt_hash(system, user)
  system_hash    TEXT NOT NULL REFERENCES blobs(hash),
  user_hash      TEXT NOT NULL REFERENCES blobs(hash),
  response_hash  TEXT NOT NULL REFERENCES blobs(hash),
  code_hash      TEXT NOT NULL REFERENCES blobs(hash),  -- '' when no code
  response_id    INTEGER REFERENCES llm_responses(id),
  superseded     INTEGER NOT NULL DEFAULT 0,
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE UNIQUE INDEX IF NOT EXISTS samples_live_key
  ON samples(run_id, workload, method, seed, sample_index) WHERE superseded = 0;

-- The judge's verdict on one candidate (a code or repair sample).
CREATE TABLE IF NOT EXISTS evaluations (
  id                 INTEGER PRIMARY KEY,
  candidate_id       INTEGER NOT NULL UNIQUE REFERENCES samples(id),
  verdict            TEXT NOT NULL,  -- taxonomy verdicts
  stage              TEXT NOT NULL,  -- taxonomy stages
  error_text         TEXT NOT NULL,
  error_signature    TEXT NOT NULL,
  stdout             TEXT NOT NULL,
  stderr             TEXT NOT NULL,
  stage_ms_json      TEXT NOT NULL,  -- {"stage": ms, ...}
  max_abs_err        REAL,
  max_rel_err        REAL,
  kernel_ms          REAL,
  baseline_ms        REAL,
  speedup            REAL,           -- baseline_ms / kernel_ms, correct only
  timing_kind        TEXT NOT NULL,  -- taxonomy timing_kinds, '' untimed
  agent_id           TEXT NOT NULL,
  agent_key          TEXT NOT NULL DEFAULT '',  -- the agent's public key id, '' if none
  backend            TEXT NOT NULL,  -- 'interpret' or 'tpu'
  device_kind        TEXT NOT NULL DEFAULT '',  -- e.g. 'TPU v6e', 'cpu'
  jax_version        TEXT NOT NULL DEFAULT '',
  libtpu_version     TEXT NOT NULL DEFAULT '',  -- '' when the agent has none
  attempts           INTEGER NOT NULL,  -- dispatches it took (requeues + 1)
  input_seeds_json   TEXT NOT NULL DEFAULT '[]',  -- [seed, ...] the judge drew
  outside_pallas_flops_share REAL,   -- structural check; NULL unmeasured
  structure_json     TEXT NOT NULL DEFAULT '{}',  -- further structural figures, {}
  -- how the numerics were checked: 'tpu', 'mosaic_interpreter' (the judge interpreted the
  -- kernels' Mosaic bodies too), 'cpu_branch_only' (the candidate-built CPU branch alone), ''
  numerics_path      TEXT NOT NULL DEFAULT '',
  -- The spread of a repeated timing (warm-up, then timing_runs timed calls): kernel_ms and
  -- baseline_ms are medians, the *_low/*_high columns the interquartile band; NULL when the
  -- judge timed once.
  timing_runs        INTEGER NOT NULL DEFAULT 1,
  kernel_ms_low      REAL,
  kernel_ms_high     REAL,
  baseline_ms_low    REAL,
  baseline_ms_high   REAL,
  -- The plausibility gate (search/plausibility.hpp): '' not checked, 'plausible',
  -- 'retimed' (a doubted timing that the re-timing on another slot replaced) or
  -- 'implausible_speed' (the re-timing held: kept and flagged for a person to look at).
  plausibility       TEXT NOT NULL DEFAULT '',
  -- both timings of a re-timed candidate: {"first": {"kernel_ms", "baseline_ms", "agent_id"},
  -- "second": {...}, "reason": "..."}; {} when not re-timed
  retiming_json      TEXT NOT NULL DEFAULT '{}',
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- The dispatcher's result check (actors/result_check.hpp), when the result was checked: the
  -- reason, each agent's verdict and key, whether they agreed, and who was quarantined; {}
  -- when it was not checked.
  cross_check_json   TEXT NOT NULL DEFAULT '{}',
  -- 1 when agent_key was quarantined (quarantined_keys): the result is not to be trusted, and a
  -- resumed run evaluates the candidate again, replacing this row.
  needs_reevaluation INTEGER NOT NULL DEFAULT 0,
  -- The fidelity facts (issue 26), NULL when nothing decided them: the outputs matched the
  -- reference within tolerance, the work ran inside Pallas kernels, the outputs' dtypes are
  -- exactly the baseline's; and what the compile tier found: '' when the kernel compiled for a
  -- v6e, libtpu's verdict and message when not, NULL when the tier did not run.
  numerics_ok        INTEGER,
  structure_ok       INTEGER,
  dtype_exact        INTEGER,
  compile_finding    TEXT,
  -- The settings the judge checked it under (issue 20): {"compile_tier": "on" or "off: why",
  -- "full_shapes": "on" or "off: why", "overrides": [host environment variables]}; NULL from a
  -- judge that predates them.
  judge_settings_json TEXT
);

-- Agent keys the dispatcher's result checks caught disagreeing with the other agents
-- (actors/result_check.hpp), per run that caught them. A quarantined key gets no more leases;
-- every evaluation it sent, in any run of this database, is marked needs_reevaluation.
CREATE TABLE IF NOT EXISTS quarantined_keys (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  agent_key    TEXT NOT NULL,    -- CURVE public key (Z85); '' on a plaintext link
  agent_id     TEXT NOT NULL,    -- the name its HELLO gave
  reason       TEXT NOT NULL,
  job_id       INTEGER NOT NULL, -- the candidate on which it was caught
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (run_id, agent_key, agent_id)
);

-- Side-by-side re-timings (judge/retiming.py): when a search ends, its best and runner-up
-- correct kernels are timed again with the baseline in one sitting, interleaved on one slot.
-- One row per kernel; the rows of one sitting share `sitting` and its baseline figures. The
-- report publishes the faster by these medians and says when the bands overlap. A sitting
-- the judge could not hold has `error` set and NULL times.
CREATE TABLE IF NOT EXISTS sittings (
  id               INTEGER PRIMARY KEY,
  sitting          INTEGER NOT NULL,  -- shared by the rows of one sitting
  run_id           INTEGER NOT NULL REFERENCES runs(id),
  workload         TEXT NOT NULL,
  method           TEXT NOT NULL,
  seed             INTEGER NOT NULL,
  position         INTEGER NOT NULL,  -- 0: the best by the evaluations' timings, 1: the runner-up
  candidate_id     INTEGER NOT NULL REFERENCES samples(id),
  kernel_ms        REAL,
  kernel_ms_low    REAL,
  kernel_ms_high   REAL,
  baseline_ms      REAL,
  baseline_ms_low  REAL,
  baseline_ms_high REAL,
  timing_runs      INTEGER NOT NULL DEFAULT 0,
  timing_kind      TEXT NOT NULL DEFAULT '',
  agent_key        TEXT NOT NULL DEFAULT '',
  error            TEXT NOT NULL DEFAULT '',
  created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (sitting, position)
);
CREATE INDEX IF NOT EXISTS sittings_by_run ON sittings (run_id, workload);

-- The candidates as people and tests query them: live code and repair
-- samples with their texts. Views hold no data, so open() re-creates them
-- and a change here reaches existing databases.
DROP VIEW IF EXISTS candidates;
CREATE VIEW candidates AS
  SELECT s.id, s.run_id, s.workload, s.method, s.seed, s.sample_index,
         s.role, s.phase, s.generation, s.parent_id, s.plan_id,
         s.prompt_hash, r.text AS response, c.text AS code, s.code_hash,
         s.response_id, s.created_at
  FROM samples s
  JOIN blobs r ON r.hash = s.response_hash
  JOIN blobs c ON c.hash = s.code_hash
  WHERE s.superseded = 0 AND s.role IN ('code', 'repair');
