"""A two-cell sweep in batch mode against the local stand-in server (issue 22's done-when).

Two cells with the same llm section and seed (they differ only in evaluation.timeout_s, which
no prompt mentions) share one gateway: they make the same prompts, and each sample is paid
once. In batch mode every request reaches the server inside a batch job, each call's stored
cost is half of what the same tokens cost online (configs/prices.yaml, gpt-5-mini), and a
coordinator SIGKILLed while a job runs resumes by polling it: no request is answered in two
jobs. The fake server's prompt cache is off (--cache-min-tokens 0) so a call's cost is a pure
function of its tokens. The kill test runs by default (~10-35 s on 2 cores); the online vs
batch comparison runs two sweeps and is opt-in: PALLADIUM_SLOW_TESTS=1.
"""
import collections
import os
import signal
import subprocess
import time

import pytest

from conftest import ROOT, db_rows
from test_llm_providers import FakeServer

pytestmark = pytest.mark.integration

# configs/prices.yaml, gpt-5-mini: $ per 1M tokens online; batch is half of each.
PRICE_IN, PRICE_OUT = 0.25, 2.00


def sweep_config(path, port, mode, journal):
    path.write_text(f"""name: batch-sweep-{mode}
run:
  name: batch-base
  method: iterative
  workloads: [12p]  # not a priority workload: no hand-tuned reference cell
  budget_per_workload: 2
  seeds: [0]
  llm:
    provider: openai
    model: gpt-5-mini
    base_url: http://127.0.0.1:{port}/v1
    api_key_env: PALLADIUM_IT_KEY
    max_output_tokens: 2048
    mode: {mode}
    batch_collect_s: 0.2
    batch_poll_s: 0.2
    batch_journal: {journal}
  evaluation: {{backend: interpret, timeout_s: 40, input_seeds: [0]}}
  agents: {{local: 1, slots_per_agent: 1, listen: 'tcp://127.0.0.1:0'}}
grid:
  evaluation.timeout_s: [40, 45]
concurrency: 2
""")
    return path


def sweep(palladium_bin, config, db, **popen):
    from test_llm_providers import KEY
    env = dict(os.environ, PALLADIUM_IT_KEY=KEY)
    return subprocess.Popen([str(palladium_bin), "sweep", str(config), "--db", str(db)],
                            env=env, cwd=ROOT, text=True, **popen)


def online_cost(prompt, completion, thinking):
    return (prompt * PRICE_IN + (completion + thinking) * PRICE_OUT) / 1e6


def jobs_of(log):
    return [e for e in log if "batch_job" in e]


def assert_cells_made_the_same_prompts(db):
    prompts = collections.defaultdict(dict)
    for cell, index, prompt in db_rows(
            db, "SELECT c.cell_key, s.sample_index, s.prompt_hash "
                "FROM samples s JOIN runs r ON r.id = s.run_id "
                "JOIN cells c ON c.id = r.cell_id WHERE s.superseded = 0"):
        prompts[cell][index] = prompt
    assert len(prompts) == 2, prompts
    a, b = prompts.values()
    assert a == b and len(a) == 2, prompts


def assert_batch_priced(db):
    calls = db_rows(db, "SELECT prompt_tokens, completion_tokens, thinking_tokens, cost_usd, "
                        "batch_id FROM llm_calls WHERE status = 'ok'")
    assert calls, "no call was stored"
    for p, c, t, cost, batch_id in calls:
        assert batch_id, "every call names its batch job"
        assert cost == pytest.approx(online_cost(p, c, t) / 2, rel=1e-9)
    return calls


@pytest.mark.skipif(os.environ.get("PALLADIUM_SLOW_TESTS") != "1",
                    reason="two sweeps (~20-70 s): PALLADIUM_SLOW_TESTS=1; the kill test below "
                           "checks jobs, batch prices and equal prompts by default")
def test_a_two_cell_batch_sweep_sends_jobs_at_half_the_price_with_the_same_prompts(
        palladium_bin, tmp_path):
    rows = {}
    for mode in ("online", "batch"):
        d = tmp_path / mode
        d.mkdir()
        srv = FakeServer(d, "--batch-ms", "200", "--cache-min-tokens", "0")
        try:
            config = sweep_config(d / "sweep.yaml", srv.port, mode, d / "journal.jsonl")
            proc = sweep(palladium_bin, config, d / "s.db", stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-4000:]
            log = srv.log()
        finally:
            srv.stop()
        db = d / "s.db"
        assert {s for (s,) in db_rows(db, "SELECT status FROM runs")} == {"finished"}
        assert_cells_made_the_same_prompts(db)
        if mode == "batch":
            rows[mode] = assert_batch_priced(db)
            assert jobs_of(log), "no batch job reached the server"
            online_requests = [e for e in log if e.get("path") == "/v1/chat/completions"
                               and not e.get("batch")]
            assert not online_requests, online_requests
        else:
            rows[mode] = db_rows(db, "SELECT prompt_tokens, completion_tokens, thinking_tokens, "
                                     "cost_usd, batch_id FROM llm_calls WHERE status = 'ok'")
            assert rows[mode] and not jobs_of(log)
            for p, c, t, cost, batch_id in rows[mode]:
                assert batch_id == "" and cost == pytest.approx(online_cost(p, c, t), rel=1e-9)
    # The same work: each sample paid once in either mode, the batch total half the online one
    # at the batch run's own tokens.
    assert len(rows["batch"]) == len(rows["online"])
    batch_total = sum(r[3] for r in rows["batch"])
    assert batch_total == pytest.approx(
        sum(online_cost(p, c, t) for p, c, t, _, _ in rows["batch"]) / 2, rel=1e-9)


def test_a_batch_sweep_killed_mid_job_resumes_without_submitting_a_request_twice(
        palladium_bin, tmp_path):
    srv = FakeServer(tmp_path, "--batch-ms", "3000", "--cache-min-tokens", "0")
    try:
        journal = tmp_path / "journal.jsonl"
        config = sweep_config(tmp_path / "sweep.yaml", srv.port, "batch", journal)
        db = tmp_path / "killed.db"
        proc = sweep(palladium_bin, config, db, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 300
            while proc.poll() is None and time.monotonic() < deadline and not jobs_of(srv.log()):
                time.sleep(0.05)
            assert jobs_of(srv.log()), "the first job was never created"
            proc.send_signal(signal.SIGKILL)  # the job runs for 3 s more
        finally:
            proc.wait()
        first = jobs_of(srv.log())[0]["batch_job"]
        proc = sweep(palladium_bin, config, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-4000:]
        log = srv.log()
        answered = collections.Counter(e["custom_id"] for e in log
                                       if e.get("batch") and e.get("custom_id"))
        assert answered and max(answered.values()) == 1, answered
        stored_jobs = {b for (b,) in db_rows(db, "SELECT batch_id FROM llm_calls")}
        assert first in stored_jobs, "the resumed coordinator polled the job it had submitted"
        assert {s for (s,) in db_rows(db, "SELECT status FROM runs")} == {"finished"}
        assert not [e for e in log if e.get("path") == "/v1/chat/completions"
                    and not e.get("batch")], "every request went in a batch job"
        assert_batch_priced(db)
        assert_cells_made_the_same_prompts(db)
    finally:
        srv.stop()
