"""Issue 8 item 5, the command-line side: bad input gets a clear error on stderr, never a
silent result, and a run told to stop is marked `interrupted` and resumes."""
import signal
import subprocess
import time

import pytest

from conftest import ROOT, db_rows, wait_for_count

pytestmark = pytest.mark.integration


def palladium(palladium_bin, *args, timeout=120):
    return subprocess.run([str(palladium_bin), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def write_config(path, *, corpus="llm/replay_corpus", local=0, workloads="[12p]", budget=2):
    path.write_text(f"""name: cli-errors
workloads: {workloads}
budget_per_workload: {budget}
llm: {{provider: replay, corpus: {corpus}}}
evaluation: {{timeout_s: 60}}
agents: {{local: {local}}}
""")
    return path


@pytest.mark.parametrize("args,missing", [
    (["run"], "missing CONFIG"),
    (["report"], "missing DB"),
    (["eval", "x.py"], "missing --workload"),
    (["eval", "--workload", "8p"], "missing FILE"),
    ([], "missing the command"),
])
def test_a_missing_argument_is_named_on_stderr(palladium_bin, args, missing):
    out = palladium(palladium_bin, *args)
    assert out.returncode == 2
    assert missing in out.stderr, out.stderr
    assert out.stdout == "", "usage on error goes to stderr; stdout carries only results"


def test_eval_on_a_directory_is_refused_not_no_code(palladium_bin, tmp_path):
    out = palladium(palladium_bin, "eval", "--workload", "8p", tmp_path, "--json")
    assert out.returncode == 2
    assert "is a directory" in out.stderr
    assert out.stdout == ""


def test_sigterm_marks_the_run_interrupted_and_a_bad_config_adds_no_run(palladium_bin, tmp_path):
    db = tmp_path / "i.db"
    config = write_config(tmp_path / "c.yaml")  # no agents: the run waits for one

    def start_and_interrupt(sig):
        proc = subprocess.Popen([str(palladium_bin), "run", str(config), "--db", str(db),
                                 "--no-progress"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if db_rows(db, "SELECT status FROM runs") == [("running",)]:
                    break
            except Exception:
                pass
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, err

    code, err = start_and_interrupt(signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, err
    assert "interrupted" in err and "to resume" in err
    assert db_rows(db, "SELECT id, status FROM runs") == [(1, "interrupted")]

    # A config whose corpus is missing fails before the database is touched.
    bad = write_config(tmp_path / "bad.yaml", corpus="llm/no_such_corpus")
    out = palladium(palladium_bin, "run", bad, "--db", db)
    assert out.returncode == 2
    assert "llm.corpus: no corpus directory" in out.stderr, out.stderr
    assert db_rows(db, "SELECT id, status FROM runs") == [(1, "interrupted")]

    # The interrupted run is the one a rerun resumes (Ctrl-C this time).
    code, err = start_and_interrupt(signal.SIGINT)
    assert code == 128 + signal.SIGINT, err
    assert db_rows(db, "SELECT id, status FROM runs") == [(1, "interrupted")]


def test_interrupted_mid_evaluation_then_resumed_pays_for_nothing_twice(palladium_bin, tmp_path):
    db = tmp_path / "m.db"
    config = write_config(tmp_path / "c.yaml", local=1, workloads="[12p]", budget=3)
    proc = subprocess.Popen([str(palladium_bin), "run", str(config), "--db", str(db),
                             "--no-progress", "--no-report"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    wait_for_count(db, "evaluations", 1, proc=proc, timeout=300, poll=0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert db_rows(db, "SELECT status FROM runs") == [("interrupted",)]
    before = db_rows(db, "SELECT candidate_id, verdict, created_at FROM evaluations")

    out = palladium(palladium_bin, "run", config, "--db", db, "--no-progress", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert db_rows(db, "SELECT id, status FROM runs") == [(1, "finished")]
    after = db_rows(db, "SELECT candidate_id, verdict, created_at FROM evaluations")
    assert set(before) <= set(after) and len(after) == 3
    assert db_rows(db, "SELECT COUNT(*) FROM llm_calls")[0][0] == 3, "no response paid twice"
