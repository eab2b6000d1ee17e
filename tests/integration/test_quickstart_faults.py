"""The quick start, cut to three workloads of four candidates, killed and resumed: an agent
SIGKILLed mid-run loses no candidate; a coordinator SIGKILLed and run again pays for nothing
twice."""
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, db_rows, wait_for_count
from quickstart_util import check_run_is_complete_and_consistent, run_palladium, small_quickstart

pytestmark = pytest.mark.integration


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

    code, out, err = run_palladium(palladium_bin, db, on_start=kill_one_agent_once_work_flows,
                                   config=small_quickstart(tmp_path))
    assert killed, "the test never got to kill an agent"
    assert code == 0, err[-4000:]
    check_run_is_complete_and_consistent(palladium_bin, db, workloads=3, budget=4)


def test_coordinator_killed_then_resumed_pays_for_nothing_twice(palladium_bin, tmp_path):
    db = tmp_path / "r.db"
    config = small_quickstart(tmp_path)
    proc = subprocess.Popen(
        [str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
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

    code, out, err = run_palladium(palladium_bin, db, config=config)
    assert code == 0, err[-4000:]
    check_run_is_complete_and_consistent(palladium_bin, db, workloads=3, budget=4)
    after_candidates = db_rows(db, "SELECT id, response FROM candidates ORDER BY id")
    assert after_candidates[:len(before["candidates"])] == before["candidates"]
    after_evals = set(db_rows(db, "SELECT candidate_id, verdict, created_at FROM evaluations"))
    assert set(before["evaluations"]) <= after_evals, "finished evaluations are kept, not redone"
    # One LLM call per candidate: nothing generated before the kill was paid for again.
    assert len(db_rows(db, "SELECT id FROM llm_calls")) == len(after_candidates)
    assert db_rows(db, "SELECT COUNT(*) FROM runs")[0][0] == 1
