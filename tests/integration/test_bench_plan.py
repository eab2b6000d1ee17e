"""scripts/bench_plan.sh: `palladium plan` against a measured run on the fake server.

The requests/min scenario (about 2.5 minutes: 24 calls at 12 a minute) is opt-in
(PALLADIUM_SLOW_TESTS=1); tests/cli/test_plan_command.py is the default suite's test of plan's
output, and an unknown scenario is refused by name in a second."""
import os
import subprocess

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_plan.sh"


def test_an_unknown_scenario_is_named():
    out = subprocess.run(["bash", str(SCRIPT), "sprint"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2
    assert "unknown scenario 'sprint' (rpm, spend)" in out.stderr


@pytest.mark.skipif(os.environ.get("PALLADIUM_SLOW_TESTS") != "1",
                    reason="a 2.5-minute rate-limited run: PALLADIUM_SLOW_TESTS=1")
def test_the_plan_predicts_a_rate_limited_run_within_a_quarter():
    out = subprocess.run(["bash", str(SCRIPT), "rpm"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    row = next(l for l in out.stdout.splitlines() if l.startswith("rpm "))
    cols = row.split()
    # scen, "requests/min", plan calls, measured calls, plan s, measured s, ratio, plan $,
    # measured $, ratio, eval s, start s, 429s
    assert cols[1] == "requests/min", row
    assert cols[2] == cols[3], ("the dry run's calls are the run's", row)
    assert 0.75 <= float(cols[6]) <= 1.25, ("wall time", row)
    assert 0.8 <= float(cols[9]) <= 1.2, ("dollars", row)
    assert cols[12] == "0", ("the server refused calls: the gateway broke its limit", row)
