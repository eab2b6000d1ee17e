"""Issue 6's "done when", offline: the three methods and the budget policies end to end.

Each config of configs/study/offline/ and configs/policies/ runs as shipped (real agents, real
interpret-mode evaluations of the synthetic model's real kernels) except for the budget, which
PALLADIUM_STUDY_BUDGET may lower to keep the run short (default 32 per workload: at 16 the beam's
translate phase gets 4 samples and often no seed; the shipped 64 takes about twice as long). Checked on the JSON report:
- iterative + context above iterative in per-sample correctness;
- the Autocomp method's optimise phase beating its translate phase's best correct speedup on at
  least three workloads;
- every policy finishes within its budget.

Opt-in (PALLADIUM_SLOW_TESTS=1): about an hour on 2 cores. The synthetic model is a stand-in
for an LLM, so these numbers describe the model's set rates and the search methods, not an LLM.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, db_rows, report_json

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.environ.get("PALLADIUM_SLOW_TESTS") != "1",
                       reason="about an hour on 2 cores; opt in with PALLADIUM_SLOW_TESTS=1"),
]

BUDGET = int(os.environ.get("PALLADIUM_STUDY_BUDGET", "32"))


def run_config(palladium_bin, tmp_path, config: Path, budget=None):
    """Runs `config` (its budget_per_workload lowered to `budget` when it is larger)."""
    text = config.read_text()
    shipped = int(re.search(r"^budget_per_workload: (\d+)", text, re.M).group(1))
    if budget is not None and budget < shipped:
        text = re.sub(r"^budget_per_workload: \d+", f"budget_per_workload: {budget}", text,
                      flags=re.M)
    path = tmp_path / config.name
    path.write_text(text)
    db = tmp_path / (config.stem + ".db")
    out = subprocess.run([str(palladium_bin), "run", str(path), "--db", str(db), "--no-progress",
                          "--no-report"], capture_output=True, text=True, cwd=ROOT, timeout=7200)
    assert out.returncode == 0, out.stderr[-4000:]
    report = report_json(palladium_bin, db)
    assert report["run"]["status"] == "finished"
    assert report["run"]["models"] == ["synthetic"]
    return db, report, min(shipped, budget or shipped)


def test_context_beats_the_plain_loop_and_optimising_beats_translating(palladium_bin, tmp_path):
    study = ROOT / "configs" / "study" / "offline"
    _, plain, _ = run_config(palladium_bin, tmp_path, study / "iterative.yaml", BUDGET)
    _, context, _ = run_config(palladium_bin, tmp_path, study / "iterative_context.yaml", BUDGET)
    p, c = plain["suite"], context["suite"]
    print(f"iterative: {p['correct']}/{p['candidates']} correct, solved {p['solved']}; "
          f"iterative+context: {c['correct']}/{c['candidates']}, solved {c['solved']}")
    assert c["per_sample_correctness"] > p["per_sample_correctness"]

    _, beam, _ = run_config(palladium_bin, tmp_path, study / "autocomp.yaml", BUDGET)
    improved = []
    for w in beam["workloads"]:
        phases = w.get("phases", {})
        t = (phases.get("translate") or {}).get("best_speedup")
        o = (phases.get("optimise") or {}).get("best_speedup")
        print(f"autocomp {w['id']}: translate best {t}, optimise best {o}")
        if t is not None and o is not None and o > t:
            improved.append(w["id"])
    assert len(improved) >= 3, improved


@pytest.mark.parametrize("name", ["adaptive", "global_reallocation", "early_stop"])
def test_each_budget_policy_runs_to_the_end_within_its_budget(palladium_bin, tmp_path, name):
    db, report, budget = run_config(palladium_bin, tmp_path,
                                    ROOT / "configs" / "policies" / f"{name}.yaml", 2 * BUDGET)
    workloads = len(report["workloads"])
    (candidates,), = db_rows(db, "SELECT COUNT(*) FROM candidates")
    assert 0 < candidates <= budget * workloads
    for w in report["workloads"]:
        if name != "global_reallocation":  # reallocation may move budget between workloads
            assert w["candidates"] <= budget, w
