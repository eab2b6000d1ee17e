"""Fixtures for the end-to-end runs: they start the real palladium binary."""
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def palladium_bin():
    path = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh (scripts/test.sh does it)")
    return path


def report_json(palladium_bin, db):
    out = subprocess.run([str(palladium_bin), "report", str(db), "--format", "json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def db_rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def wait_for_count(db, table, at_least, proc=None, timeout=300, poll=0.3):
    """Waits until `table` has `at_least` rows (or `proc` has exited); returns the last count.

    The database may not exist yet, or be mid-creation, when polling starts: that counts as 0.
    """
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline and (proc is None or proc.poll() is None):
        try:
            count = db_rows(db, f"SELECT COUNT(*) FROM {table}")[0][0]
        except sqlite3.Error:
            count = 0
        if count >= at_least:
            break
        time.sleep(poll)
    return count


# The fault tests' run: two workloads of four replayed candidates each (from `corpus`: the fault
# tests replay fake_judge_run.sleep_corpus to fake judges), fast heartbeats so a silent agent is
# declared dead within a second (pinned: the interval does not follow the evaluations' length).
FAULT_RUN_CONFIG = """name: {name}
method: iterative
workloads: [8p, 41k]
budget_per_workload: 4
seeds: [0]
llm:
  provider: replay
  corpus: {corpus}
evaluation:
  backend: interpret
  timeout_s: 60
  input_seeds: [0, 1]
agents:
  local: {local}
  slots_per_agent: 1
  listen: {listen}
  heartbeat_ms: 200
  liveness: 4
  eval_heartbeat_max_ms: 200
"""


def assert_each_candidate_evaluated_and_paid_once(db, candidates=8):
    """A fault run's promise: one evaluation per candidate, one LLM call per candidate."""
    (status,), = db_rows(db, "SELECT status FROM runs")
    assert status == "finished"
    per_candidate = dict(db_rows(
        db, "SELECT c.id, COUNT(e.id) FROM candidates c LEFT JOIN evaluations e "
            "ON e.candidate_id = c.id GROUP BY c.id"))
    assert len(per_candidate) == candidates and set(per_candidate.values()) == {1}, per_candidate
    assert len(db_rows(db, "SELECT id FROM llm_calls")) == candidates, "nothing paid for twice"
