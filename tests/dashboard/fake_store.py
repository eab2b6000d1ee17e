"""Builds a small run database with store/schema.sql for the dashboard's unit tests: the real
schema, rows written the way the store writes them (texts as blobs, rows naming their hashes)."""
import hashlib
import json
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
XSS = "</script><script>alert(1)</script>"


def blob(con, text):
    h = hashlib.sha256(text.encode()).hexdigest()
    con.execute("INSERT OR IGNORE INTO blobs (hash, bytes, text) VALUES (?, ?, ?)",
                (h, len(text.encode()), text))
    return h


def add_run(con, name="unit", config="name: unit\n"):
    cur = con.execute("INSERT INTO runs (name, config_text, config_hash) VALUES (?, ?, ?)",
                      (name, config, hashlib.sha256(config.encode()).hexdigest()))
    return cur.lastrowid


def add_response(con, provider, model, text, sample_index, paid=True):
    call_id = None
    if paid:
        call_id = con.execute(
            "INSERT INTO llm_calls (run_id, provider, model, role, samples, status, error_code, "
            "error_text, http_status, prompt_tokens, completion_tokens, thinking_tokens, "
            "tokens_estimated, latency_ms, cost_usd, batch_id) "
            "VALUES (1, ?, ?, 'code', 1, 'ok', '', '', 200, 100, 50, 0, 1, 12.5, NULL, '')",
            (provider, model)).lastrowid
    e = blob(con, "")
    return con.execute(
        "INSERT INTO llm_responses (provider, model, prompt_hash, params_hash, sample_index, seed, "
        "params_json, system_hash, user_hash, response_hash, model_reported, finish_reason, "
        "prompt_tokens, completion_tokens, thinking_tokens, tokens_estimated, latency_ms, "
        "cost_usd, batch_id, call_id) VALUES (?, ?, ?, 'p', ?, 0, '{}', ?, ?, ?, ?, 'stop', 100, "
        "50, 0, 1, 12.5, NULL, '', ?)",
        (provider, model, f"prompt{sample_index}", sample_index, e, e, blob(con, text), model,
         call_id)).lastrowid


def add_sample(con, run_id, workload, index, code, *, system="Write a kernel.", user=None,
               parent=None, response=None, response_id=None):
    user = user if user is not None else f"## Workload {workload}: test\n\nWrite it."
    response = response if response is not None else f"```python\n{code}\n```"
    e = blob(con, "")
    return con.execute(
        "INSERT INTO samples (run_id, workload, method, seed, sample_index, role, phase, "
        "generation, parent_id, plan_hash, prompt_hash, system_hash, user_hash, response_hash, "
        "code_hash, response_id) VALUES (?, ?, 'iterative', 0, ?, 'code', 'iterate', ?, ?, ?, ?, "
        "?, ?, ?, ?, ?)",
        (run_id, workload, index, index, parent, e, f"prompt{index}", blob(con, system),
         blob(con, user), blob(con, response), blob(con, code), response_id)).lastrowid


def add_evaluation(con, candidate, verdict, stage="numerics", speedup=None, error=""):
    con.execute(
        "INSERT INTO evaluations (candidate_id, verdict, stage, error_text, error_signature, "
        "stdout, stderr, stage_ms_json, speedup, kernel_ms, baseline_ms, timing_kind, agent_id, "
        "backend, attempts) VALUES (?, ?, ?, ?, '', '', '', ?, ?, ?, ?, ?, 'agent-1', "
        "'interpret', 1)",
        (candidate, verdict, stage, error, json.dumps({"lower": 120.0, "numerics": 40.5}),
         speedup, 1.0 if speedup else None, speedup, "cpu-wall" if speedup else ""))


def make_store(path):
    """A run of workload 8p: sample 0 wrong, sample 1 correct (1.5x) built on 0, sample 2 with
    the XSS payload in its code and error, not judged yet; 41k has one answer from the cache."""
    con = sqlite3.connect(path)
    con.executescript((ROOT / "store" / "schema.sql").read_text())
    con.execute("PRAGMA application_id = 0x50414C44")
    con.execute("PRAGMA user_version = 2")
    run = add_run(con)
    r0 = add_response(con, "synthetic", "synthetic", "```python\nA\n```", 0)
    s0 = add_sample(con, run, "8p", 0, "def workload(x):\n    return x + 1\n", response_id=r0)
    add_evaluation(con, s0, "numerics_mismatch", error="max abs err 3.0 > tolerance")
    feedback = ("## Workload 8p: test\n\n## Feedback on your previous attempt (sample 0)\n\n"
                "Verdict: numerics_mismatch (stage: numerics)\nError: max abs err 3.0")
    s1 = add_sample(con, run, "8p", 1, "def workload(x):\n    return x * 2\n", user=feedback,
                    parent=s0, system="Write a kernel.\n\n## Context (api): Pallas API\nuse pl.")
    add_evaluation(con, s1, "correct", stage="timing", speedup=1.5)
    s2 = add_sample(con, run, "8p", 2, f"s = '{XSS}'\nkey = 'sk-abcdefghijklmnopqrstuvwx'\n")
    cached = add_response(con, "synthetic", "synthetic", "no code here", 7, paid=False)
    s3 = add_sample(con, run, "41k", 0, "", response="no code here", response_id=cached)
    add_evaluation(con, s3, "no_code", stage="extract", error=f"x {XSS}")
    con.commit()
    con.close()
    return {"run": run, "wrong": s0, "correct": s1, "xss": s2, "cached": s3}
