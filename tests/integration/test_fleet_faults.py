"""Fleet faults on a real run: a frozen agent (SIGSTOP), and the secrets a local agent gets.

SIGSTOP freezes one of the two local agents mid-run for longer than the liveness timeout: the
coordinator declares it dead and requeues its job; after SIGCONT it finds its session gone,
says hello again and keeps working; whatever it finished while frozen is dropped by its lease.
The run must end with one evaluation per candidate and one LLM call per candidate.

The agents run the fake judge on candidates that take FAKE_EVAL_MS each (fake_judge_run.py):
what is tested is the coordinator and its agents, and real judges made this a minute and more
of JAX start-up and interpretation (and the corpus's hanging kernel's 60 s timeout).
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (FAULT_RUN_CONFIG, ROOT, assert_each_candidate_evaluated_and_paid_once,
                      wait_for_count)
from fake_judge_run import fake_judge_env, sleep_corpus

pytestmark = pytest.mark.integration

# Long enough that the frozen agent holds a job and work is left when it thaws (the 8 candidates
# are two chains of 4: about 4 x FAKE_EVAL_MS on two agents, more on one).
FAKE_EVAL_MS = 3000


def children(pid):
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def environ_of(pid):
    return dict(kv.split("=", 1) for kv in
                Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
                if "=" in kv)


def test_frozen_agent_is_replaced_then_rejoins_and_no_secret_reaches_it(palladium_bin, tmp_path):
    config = tmp_path / "faults.yaml"
    corpus = sleep_corpus(tmp_path, ["8p", "41k"], 4, FAKE_EVAL_MS)
    config.write_text(FAULT_RUN_CONFIG.format(name="faults", local=2, corpus=corpus,
                                              listen="tcp://127.0.0.1:0"))
    db = tmp_path / "f.db"
    log = open(tmp_path / "coordinator.log", "w")
    env = fake_judge_env(tmp_path, dict(os.environ, OPENAI_API_KEY="sk-test-must-not-leak",
                                        GEMINI_API_KEY="gm-test-must-not-leak"))
    proc = subprocess.Popen(
        [str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress", "--no-report"],
        stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT, env=env)
    try:
        wait_for_count(db, "evaluations", 1, timeout=300, poll=0.3)
        agents = children(proc.pid)
        assert len(agents) == 2, agents
        for pid in agents:
            agent_env = environ_of(pid)
            assert "OPENAI_API_KEY" not in agent_env and "GEMINI_API_KEY" not in agent_env
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
            assert "--key-fd" in cmdline and "key_secret" not in cmdline, \
                "the agent's secret key is not on its command line"
        frozen = agents[0]
        os.kill(frozen, signal.SIGSTOP)
        time.sleep(4)  # 20 x the 200 ms heartbeat
        os.kill(frozen, signal.SIGCONT)
        assert proc.wait(timeout=600) == 0, (tmp_path / "coordinator.log").read_text()[-4000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (tmp_path / "coordinator.log").read_text()
    assert "went silent" in text, text[-3000:]
    assert text.count("joined") >= 3, "the frozen agent joined again after SIGCONT"
    assert_each_candidate_evaluated_and_paid_once(db, candidates=8)
    # Nothing the coordinator stored carries the keys either.
    dump = subprocess.run(["sqlite3", str(db), ".dump"], capture_output=True, text=True).stdout
    assert "must-not-leak" not in dump
