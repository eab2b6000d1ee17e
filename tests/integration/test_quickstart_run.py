"""The quickstart config end to end: coordinator, two agent processes, judges.

These are among the slowest tests (a few minutes on 2 cores) and the ones that prove the pieces
work together: replay LLM -> store -> ZeroMQ -> agent -> judge -> verdict -> store -> report.
The kill-and-resume tests on the same run are in test_quickstart_faults.py, so that the two
pytest workers can take them in parallel.
"""
import time
from collections import Counter

import pytest

from quickstart_util import check_run_is_complete_and_consistent, run_palladium

pytestmark = pytest.mark.integration


def test_quickstart_two_agents(palladium_bin, tmp_path):
    db = tmp_path / "q.db"
    started = time.monotonic()
    code, out, err = run_palladium(palladium_bin, db)
    elapsed = time.monotonic() - started
    assert code == 0, err[-4000:]
    report = check_run_is_complete_and_consistent(palladium_bin, db)
    verdicts = Counter()
    for w in report["workloads"]:
        verdicts.update(w["verdicts"])
        assert w["correct"] >= 1, f"workload {w['id']} has no correct kernel: {w['verdicts']}"
    assert len(verdicts) >= 5, verdicts
    assert "suite" in out.lower() or "per-sample" in out.lower(), "the run prints the report"
    print(f"quickstart took {elapsed:.0f} s; verdicts {dict(verdicts)}")
