"""What the quick-start integration tests share: the config, a smaller cut of it for the
fault tests, running `palladium run` as a user does, and the checks every finished run must
pass."""
import json
import math
import os
import re
import subprocess
from collections import Counter

import pytest

from conftest import ROOT, db_rows, report_json

QUICKSTART = ROOT / "configs" / "quickstart.yaml"


SMALL_WORKLOADS = ["8p", "41k", "12p"]


def small_quickstart(tmp_path, corpus=None):
    """The quick start cut to three workloads of four candidates: the fault tests need a run
    to kill and resume, not the whole quick start again (the first test runs that). `corpus`
    replaces the replay corpus (the fault tests' fake_judge_run.sleep_corpus)."""
    text = QUICKSTART.read_text()
    text = re.sub(r"^workloads: .*$", f"workloads: [{', '.join(SMALL_WORKLOADS)}]", text,
                  flags=re.M)
    text = re.sub(r"^budget_per_workload: \d+", "budget_per_workload: 4", text, flags=re.M)
    if corpus is not None:
        text, n = re.subn(r"^  corpus: .*$", f"  corpus: {corpus}", text, flags=re.M)
        assert n == 1, "the quick start names one replay corpus"
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return path


def run_palladium(palladium_bin, db, *extra, on_start=None, config=QUICKSTART, env=None):
    # The quick start as a user runs it: the compile tier on (tests/conftest.py turns it off
    # elsewhere).
    proc = subprocess.Popen(
        [str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**(os.environ if env is None else env), "PALLADIUM_COMPILE_TIER": "on"})
    if on_start:
        on_start(proc)
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def check_run_is_complete_and_consistent(palladium_bin, db, workloads=5, budget=7,
                                         real_judges=True):
    """Every generated candidate has exactly one evaluation, and the JSON
    report's numbers equal what the database holds. With `real_judges`, also that what the
    judges drew and how they checked reached the store (a fake judge sends neither)."""
    (run_id, status), = db_rows(db, "SELECT id, status FROM runs")
    assert status == "finished"
    candidates = db_rows(db, "SELECT id, workload FROM candidates WHERE run_id = ?", run_id)
    assert len(candidates) == workloads * budget, f"budget {budget} for each of {workloads} workloads"
    per_candidate = dict(db_rows(
        db, "SELECT c.id, COUNT(e.id) FROM candidates c LEFT JOIN evaluations e "
            "ON e.candidate_id = c.id GROUP BY c.id"))
    assert set(per_candidate.values()) == {1}, per_candidate
    assert len(db_rows(db, "SELECT id FROM llm_calls WHERE run_id = ?", run_id)) == len(candidates)
    # Every evaluation names the agent's device, JAX and the libtpu of its compile tier.
    versions = set(db_rows(db, "SELECT device_kind, jax_version, libtpu_version FROM evaluations"))
    assert len(versions) == 1 and all(versions.pop()), "device_kind, jax_version, libtpu_version"

    # What the judge drew, and how it checked each correct one, reach the store.
    for seeds, path in db_rows(db, "SELECT input_seeds_json, numerics_path FROM evaluations "
                                   "WHERE verdict = 'correct'") if real_judges else []:
        assert json.loads(seeds) and path == "mosaic_interpreter", (seeds, path)

    rows = db_rows(db, "SELECT c.workload, e.verdict, e.speedup, e.timing_kind FROM candidates c "
                       "JOIN evaluations e ON e.candidate_id = c.id")
    report = report_json(palladium_bin, db)
    suite = report["suite"]
    correct = [r for r in rows if r[1] == "correct"]
    assert suite["candidates"] == len(rows)
    assert suite["correct"] == len(correct)
    assert suite["per_sample_correctness"] == pytest.approx(len(correct) / len(rows))
    assert suite["workloads"] == workloads
    assert suite["timing"] == "cpu-wall"
    by_workload = {w["id"]: w for w in report["workloads"]}
    speedups = []
    for wid in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == wid]
        w = by_workload[wid]
        assert w["candidates"] == len(mine)
        assert w["verdicts"] == dict(Counter(r[1] for r in mine))
        best = max([r[2] for r in mine if r[1] == "correct" and r[2] is not None], default=1.0)
        if "sitting" in w:
            # A re-timed workload publishes the faster of its sitting, against the baseline
            # timed in that sitting (store table sittings).
            sitting = db_rows(db, "SELECT kernel_ms, baseline_ms FROM sittings WHERE workload = ? "
                                  "AND error = '' AND sitting = (SELECT MAX(sitting) FROM "
                                  "sittings WHERE workload = ? AND error = '')", wid, wid)
            assert len(sitting) == 2, sitting
            best = sitting[0][1] / min(ms for ms, _ in sitting)
        assert w["best_speedup"] == pytest.approx(best)
        speedups.append(max(best, 1.0))
    assert suite["solved"] == sum(1 for w in by_workload.values() if w["correct"] > 0)
    # The study's definition: numerics within tolerance, from the stored facts (a real judge
    # sends numerics_ok; a correct verdict counts either way).
    study = db_rows(db, "SELECT c.workload, COUNT(*) FROM candidates c JOIN evaluations e ON "
                        "e.candidate_id = c.id WHERE e.verdict = 'correct' OR e.numerics_ok = 1 "
                        "GROUP BY c.workload")
    assert {w: n for w, n in study} == \
        {w["id"]: w["study_correct"] for w in report["workloads"] if w["study_correct"]}
    assert suite["study_definition"]["correct"] == sum(n for _, n in study) >= suite["correct"]
    assert suite["geomean_speedup"] == pytest.approx(
        math.exp(sum(math.log(s) for s in speedups) / len(speedups)))
    return report
