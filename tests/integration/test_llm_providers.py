"""`palladium run` with llm.provider openai and gemini against the local stand-in server.

No real API is called: tests/llm/fake_llm_server.py speaks both APIs' exact JSON on
loopback, with a small module per answer (it fails its check in milliseconds, so the run is
quick; the kernels' own checks are tested elsewhere). Its request log is the witness of what the
coordinator really sent; the database must hold the usage the server reported, and no file
the run wrote may hold the API key.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, db_rows, report_json, wait_for_count

pytestmark = pytest.mark.integration

KEY = "sk-integration-secret-5f1e2d3c"


class FakeServer:
    def __init__(self, tmp_path, *extra):
        self.dir = tmp_path
        port_file = tmp_path / "port"
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/llm/fake_llm_server.py"), "--port", "0",
             "--port-file", str(port_file), "--log", str(tmp_path / "requests.jsonl"),
             "--api-key", KEY, *extra])
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            assert self.proc.poll() is None, "the fake server exited"
            assert time.monotonic() < deadline, "the fake server did not start"
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    def log(self):
        import json
        path = self.dir / "requests.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path):
    s = FakeServer(tmp_path)
    yield s
    s.stop()


def write_config(path, provider, port, budget=3, model=None):
    base = f"http://127.0.0.1:{port}/v1" if provider == "openai" else f"http://127.0.0.1:{port}/v1beta"
    model = model or ("gpt-5-mini" if provider == "openai" else "gemini-2.5-flash")
    path.write_text(f"""name: llm_{provider}
method: iterative
workloads: [8p]
budget_per_workload: {budget}
seeds: [0]
llm:
  provider: {provider}
  model: {model}
  base_url: {base}
  api_key_env: PALLADIUM_IT_KEY
  max_output_tokens: 2048
evaluation: {{backend: interpret, timeout_s: 40, input_seeds: [0]}}
agents: {{local: 1, slots_per_agent: 1, listen: 'tcp://127.0.0.1:0'}}
""")
    return path


def run(palladium_bin, config, db, **popen):
    env = dict(os.environ, PALLADIUM_IT_KEY=KEY)
    return subprocess.Popen([str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress"],
                            env=env, cwd=ROOT, text=True, **popen)


def files_under(*roots):
    for root in roots:
        root = Path(root)
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file())


def assert_key_nowhere(*roots):
    for f in files_under(*roots):
        assert KEY.encode() not in f.read_bytes(), f"the API key leaked into {f}"


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_run_completes_and_stores_the_servers_usage(palladium_bin, server, tmp_path, provider):
    db = tmp_path / "run.db"
    config = write_config(tmp_path / "run.yaml", provider, server.port)
    proc = run(palladium_bin, config, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-4000:]
    report = report_json(palladium_bin, db)
    assert report["suite"]["candidates"] == 3

    log = server.log()
    assert all(e["auth"] for e in log), "every request carried the key from the environment"
    assert {e["api"] for e in log} == {provider}
    assert sum(e["n"] for e in log if e["status"] == 200) == 3, "one answer per candidate"
    calls = db_rows(db, "SELECT model, prompt_tokens, completion_tokens, tokens_estimated "
                        "FROM llm_calls")
    assert len(calls) == 3
    for model, prompt, completion, estimated in calls:
        assert model.startswith("gpt-5-mini" if provider == "openai" else "gemini-2.5-flash")
        assert prompt > 0 and completion > 0
        assert estimated == 0, "the server reported usage, so nothing is estimated"
    assert_key_nowhere(db, str(db) + "-wal", str(db) + ".logs")
    assert KEY not in out and KEY not in err


def test_killed_coordinator_resumes_without_asking_twice(palladium_bin, server, tmp_path):
    db = tmp_path / "kill.db"
    config = write_config(tmp_path / "kill.yaml", "openai", server.port, budget=4)
    proc = run(palladium_bin, config, db, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_count(db, "llm_calls", 2, proc=proc, timeout=300, poll=0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    stored_before = db_rows(db, "SELECT COUNT(*) FROM llm_calls")[0][0]
    assert stored_before >= 2
    asked_before = len([e for e in server.log() if e["status"] == 200])

    proc = run(palladium_bin, config, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-4000:]
    assert report_json(palladium_bin, db)["suite"]["candidates"] == 4
    asked_after = len([e for e in server.log() if e["status"] == 200]) - asked_before
    # What was stored before the kill is reused; only the rest is asked for (a call
    # answered but not yet stored when the coordinator died is the one thing asked again).
    assert asked_after == 4 - stored_before, (stored_before, asked_before, asked_after)
    assert_key_nowhere(db, str(db) + ".logs")


def write_batch_config(path, provider, port, journal, budget=3):
    write_config(path, provider, port, budget=budget)
    path.write_text(path.read_text().replace(
        "  max_output_tokens: 2048\n",
        "  max_output_tokens: 2048\n  mode: batch\n  batch_collect_s: 0.2\n  batch_poll_s: 0.2\n"
        f"  batch_journal: {journal}\n"))
    return path


def jobs_of(log):
    return [e for e in log if "batch_job" in e]


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_batch_mode_sends_jobs_and_stores_half_the_online_cost(palladium_bin, tmp_path, provider):
    costs = {}
    for mode in ("online", "batch"):
        d = tmp_path / mode
        d.mkdir()
        srv = FakeServer(d, "--batch-ms", "200")
        try:
            config = write_config(d / "run.yaml", provider, srv.port) if mode == "online" else \
                write_batch_config(d / "run.yaml", provider, srv.port, d / "journal.jsonl")
            proc = run(palladium_bin, config, d / "run.db", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-4000:]
            log = srv.log()
        finally:
            srv.stop()
        rows = db_rows(d / "run.db", "SELECT cost_usd, batch_id FROM llm_calls")
        assert len(rows) == 3
        costs[mode] = sum(r[0] for r in rows)
        if mode == "batch":
            # The iterative chain waits on each answer: one job per call, no online request.
            assert len(jobs_of(log)) == 3
            assert not [e for e in log if "batch_job" not in e and not e.get("batch")]
            assert all(r[1] for r in rows), "every call names its batch job"
        else:
            assert not jobs_of(log) and all(r[1] == "" for r in rows)
    assert costs["batch"] == pytest.approx(costs["online"] / 2, rel=1e-9), costs


def test_a_coordinator_killed_mid_batch_resumes_without_submitting_twice(palladium_bin, tmp_path):
    srv = FakeServer(tmp_path, "--batch-ms", "4000")
    try:
        db = tmp_path / "kill.db"
        config = write_batch_config(tmp_path / "kill.yaml", "openai", srv.port,
                                    tmp_path / "journal.jsonl", budget=2)
        proc = run(palladium_bin, config, db, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 300
            journal = tmp_path / "journal.jsonl"
            # Killed once the job is created and journaled (a kill between the two is covered by
            # tests/llm/batch_runner_test.cpp: the job is looked up by its journalled key).
            while proc.poll() is None and time.monotonic() < deadline and not (
                    jobs_of(srv.log()) and journal.exists() and journal.read_text()):
                time.sleep(0.05)
            assert jobs_of(srv.log()), "the first job was never submitted"
            proc.send_signal(signal.SIGKILL)  # mid-batch: the job is still in progress
        finally:
            proc.wait()
        first = jobs_of(srv.log())[0]["batch_job"]
        proc = run(palladium_bin, config, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-4000:]
        jobs = [e["batch_job"] for e in jobs_of(srv.log())]
        # The resumed coordinator polled the first job; only the second call made a new one.
        assert jobs[0] == first and len(jobs) == 2, jobs
        ids = {r[0] for r in db_rows(db, "SELECT batch_id FROM llm_calls")}
        assert first in ids
    finally:
        srv.stop()
