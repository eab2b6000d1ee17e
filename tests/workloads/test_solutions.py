"""Every workload is solvable under the judge's rules (issue 26): workloads/solutions/sol_<id>.py
is an honest Pallas kernel written for it, which the judge must call `correct` at the reduced
shapes, and whose full-shape artifact must pass the deviceless libtpu v6e compile tier.

By default a representative pair goes through the whole judge (a GEMM with a fused epilogue and
a GEMM with row reductions; about 20 s each); every solution's text is checked statically. All 50
go through the judge with PALLADIUM_SLOW_TESTS=1 (7 minutes with `-n 2` on a quiet 2-core box; an
hour at load 30).

No solution is refused by a judge limit any more. Two were, as strict xfails naming the limit
(JUDGE_LIMITS, empty now; a new limit goes there so that fixing it turns into a failure):
  13p: the candidate pipe encoded its 0-d output as shape (1,); fixed in
       sandbox/candidate/protocol.py;
  17p: the Mosaic interpreter's work bound counted matmul multiply-adds as elements (2e10,
       below 17p's 4.3e10); they have their own bound now, mosaic_interpreter.MAX_MACS.
"""
import ast
import inspect
import os
import pathlib

import pytest

from judge.evaluate import Evaluator, compile_tier_setting
from judge.lint import lint
from workloads import registry

SOLUTIONS = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "solutions"
SLOW = os.environ.get("PALLADIUM_SLOW_TESTS") == "1"
REPRESENTATIVE = ["24k", "23k"]
JUDGE_LIMITS = {}


def _source(workload_id):
    return (SOLUTIONS / f"sol_{workload_id}.py").read_text()


def _workload_params(tree):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "workload":
            return [a.arg for a in node.args.args]
    return None


@pytest.mark.parametrize("workload_id", registry.ids())
def test_every_workload_has_a_lint_clean_solution_with_its_signature(workload_id):
    path = SOLUTIONS / f"sol_{workload_id}.py"
    assert path.exists(), f"no honest solution for {workload_id}: {path}"
    code = path.read_text()
    assert lint(code) == [], f"{path.name}: {lint(code)}"
    tree = ast.parse(code)
    assert ast.get_docstring(tree), f"{path.name} says nothing of its tiling"
    params = _workload_params(tree)
    assert params is not None, f"{path.name} defines no workload()"
    expected = list(inspect.signature(registry.get(workload_id).workload).parameters)
    assert len(params) == len(expected), f"{path.name}: workload{tuple(params)} vs {expected}"
    assert "pallas_call" in code, f"{path.name} has no Pallas kernel"


@pytest.fixture(scope="module")
def judge():
    on, why = compile_tier_setting("interpret", "on")
    assert on, f"the compile tier cannot run here: {why}"
    evaluator = Evaluator(compile_tier=True)
    yield evaluator
    evaluator.close()


@pytest.mark.parametrize("workload_id", registry.ids() if SLOW else REPRESENTATIVE)
def test_solution_is_correct_and_compiles_for_v6e_at_the_full_shapes(workload_id, judge):
    result = judge.evaluate(workload_id, _source(workload_id))
    if workload_id in JUDGE_LIMITS:
        assert result["verdict"] != "correct", f"the judge's limit is fixed: drop {workload_id}"
        pytest.xfail(JUDGE_LIMITS[workload_id])
    assert result["verdict"] == "correct", (result["stage"], result["error"][-2000:])
    tier = result["compile_tier"]
    assert tier and tier.get("compile_ms") is not None, f"compile tier did not run: {tier}"
    assert result["outside_pallas_fraction"] is not None
    assert result["outside_pallas_fraction"] < 0.01, result["outside_pallas_fraction"]
