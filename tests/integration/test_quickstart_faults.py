"""The quick start, cut to three workloads of four candidates, killed and resumed: an agent
SIGKILLed mid-run loses no candidate; a coordinator SIGKILLed and run again pays for nothing
twice.

Both are about the coordinator, its agents and the store, not the judge: their agents run the
fake judge on candidates that each take FAKE_EVAL_MS (fake_judge_run.py), so each test takes
seconds, not a minute and more. The real judges' side of a finished quick start (versions,
input seeds, numerics path, the report over real verdicts) is checked in test_quickstart_run.py.
"""
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, db_rows, wait_for_count
from fake_judge_run import fake_judge_env, sleep_corpus
from quickstart_util import (SMALL_WORKLOADS, check_run_is_complete_and_consistent, run_palladium,
                             small_quickstart)

pytestmark = pytest.mark.integration

# Long enough that the kills below land with jobs in flight and most of the run still to come
# (a three-workload run of 12 candidates on two agents takes about 6 x FAKE_EVAL_MS).
FAKE_EVAL_MS = 1500


def fake_small_quickstart(tmp_path):
    corpus = sleep_corpus(tmp_path, SMALL_WORKLOADS, 4, FAKE_EVAL_MS)
    return small_quickstart(tmp_path, corpus=corpus), fake_judge_env(tmp_path)


def test_agent_killed_mid_run_loses_no_candidate(palladium_bin, tmp_path):
    db = tmp_path / "k.db"
    killed = []

    def kill_one_agent_once_work_flows(proc):
        def killer():
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    done = db_rows(db, "SELECT COUNT(*) FROM evaluations")[0][0]
                except Exception:
                    done = 0
                if done >= 3:
                    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
                    if children:
                        os.kill(int(children[0]), signal.SIGKILL)
                        killed.append(int(children[0]))
                    return
                time.sleep(0.5)
        threading.Thread(target=killer, daemon=True).start()

    config, env = fake_small_quickstart(tmp_path)
    code, out, err = run_palladium(palladium_bin, db, on_start=kill_one_agent_once_work_flows,
                                   config=config, env=env)
    assert killed, "the test never got to kill an agent"
    assert code == 0, err[-4000:]
    check_run_is_complete_and_consistent(palladium_bin, db, workloads=3, budget=4,
                                         real_judges=False)


def test_coordinator_killed_then_resumed_pays_for_nothing_twice(palladium_bin, tmp_path):
    db = tmp_path / "r.db"
    config, env = fake_small_quickstart(tmp_path)
    proc = subprocess.Popen(
        [str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    try:
        wait_for_count(db, "evaluations", 4, timeout=600, poll=0.5)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    before = {
        "candidates": db_rows(db, "SELECT id, response FROM candidates ORDER BY id"),
        "evaluations": db_rows(db, "SELECT candidate_id, verdict, created_at FROM evaluations"),
    }
    assert 4 <= len(before["evaluations"]) < 12

    code, out, err = run_palladium(palladium_bin, db, config=config, env=env)
    assert code == 0, err[-4000:]
    check_run_is_complete_and_consistent(palladium_bin, db, workloads=3, budget=4,
                                         real_judges=False)
    after_candidates = db_rows(db, "SELECT id, response FROM candidates ORDER BY id")
    assert after_candidates[:len(before["candidates"])] == before["candidates"]
    after_evals = set(db_rows(db, "SELECT candidate_id, verdict, created_at FROM evaluations"))
    assert set(before["evaluations"]) <= after_evals, "finished evaluations are kept, not redone"
    # One LLM call per candidate: nothing generated before the kill was paid for again.
    assert len(db_rows(db, "SELECT id FROM llm_calls")) == len(after_candidates)
    assert db_rows(db, "SELECT COUNT(*) FROM runs")[0][0] == 1
