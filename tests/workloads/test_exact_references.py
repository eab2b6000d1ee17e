"""On all 50 workloads the tolerance rules (judge/compare.py) accept both the exact
answer and the bf16 baseline, and still reject known wrong answers.

At CPU_CONFIG, seed 0: the exact answer is the baseline run on the same bf16 inputs cast to
float64 (float32 for 11p, whose index arithmetic does not run in float64), rounded to the
output dtype, i.e. what a kernel that accumulates in float32 and rounds once returns. The rule
this replaces (elementwise and norm bounds against the bf16 baseline) rejected that answer on
19k, 22k, 24k, 25k and 34k at the earlier reduced shapes (issue 9);
`test_the_old_rule_rejected_the_exact_answer` keeps the evidence.

Wrong answers: zeros, the exact answer scaled by 1.25, and a dropped term (the exact answer
with the last live, non-constant floating input zeroed: a bias for most workloads).
"""
import functools
import inspect
import json
import os
import pathlib

import jax.numpy as jnp
import numpy as np
import pytest

from judge import compare
from workloads import registry

# All 50 take 328 s of one worker (load 5-11; 48 s the slowest, 17p), a tenth of the suite: they
# run with PALLADIUM_SLOW_TESTS=1. By default a representative subset runs: every workload with an
# entry in the tables below (each entry is a claim this file must keep checking) and one in three
# of the rest, of every kind (p, k) and reduction shape.
ALL_IDS = registry.ids()
SLOW = os.environ.get("PALLADIUM_SLOW_TESTS") == "1"
SENSITIVITY = json.loads((pathlib.Path(__file__).resolve().parents[2] / "workloads" /
                          "input_sensitivity.json").read_text())["workloads"]

# Workloads whose dropped term moves no element by more than atol plus 3x the bf16 baseline's own
# largest error: no tolerance that must accept the baseline can tell it from rounding. The test
# checks that bound, so an entry cannot hide a term that matters.
UNDETECTABLE_DROPS = {
    "5p": "rel_pos_bias ~ normal*0.02 shifts each logit by ~0.02 before a softmax over 1024 keys",
    "23k": "bias enters only as the constant sum(bias) = 0.64 (1024 terms ~ normal*0.02) added "
           "to row sums of order 140, where the bf16 baseline's own error is 0.58",
    "24k": "bias ~ normal*0.02 moves the LogSumExp over 1024 outputs about as much as the bf16 "
           "baseline's own error; the old rule rejected it only where both errors add",
    "28k": "ln_bias ~ normal*0.02 after a LayerNorm: a ~0.02 shift of outputs of order 1",
    "32k": "b2 ~ normal*0.02 before a LogSumExp over 1024 outputs",
    "36k": "bias ~ normal*0.02 inside sigmoids summed over 1024 features",
    "43k": "bn_mean ~ normal*0.02 shifts logits by ~0.02 before a softmax over 1024 features",
    "46k": "gn_bias ~ normal*0.02 before tanh/hardswish and a LogSumExp over 64 channels",
    "50k": "bias ~ normal*0.02 shifts logits by ~0.02 before a GELU and softmax over 1024",
}

# The workloads whose exact answer rounded to bf16 the previous rule (compare to the bf16
# baseline) rejects at CPU_CONFIG. Issue 9 found five (19k, 22k, 24k, 25k, 34k) at the earlier
# reduced shapes; at the ones that keep the full shapes' divisibility, 24k's exact answer happens
# to fall inside the old bounds.
OLD_RULE_REJECTED_EXACT = {"19k", "22k", "25k", "34k"}

IDS = ALL_IDS if SLOW else [w for i, w in enumerate(ALL_IDS)
                            if w in UNDETECTABLE_DROPS or w in OLD_RULE_REJECTED_EXACT or i % 3 == 0]


def _old_rule_accepts(got, base, atol, rtol):
    """The rule before compare.py: elementwise and 2e-2 norm bounds against the bf16 baseline."""
    for g, b in zip(got, base):
        g, b = np.asarray(g, np.float64), np.asarray(b, np.float64)
        if not (np.abs(g - b) <= atol + rtol * np.abs(b)).all():
            return False
        norm = np.linalg.norm(b)
        if norm > 1e-6 * np.sqrt(b.size) and np.linalg.norm(g - b) > 2e-2 * norm:
            return False
    return True


def _dropped_input(module, inputs):
    names = list(inspect.signature(module.workload).parameters)
    dead = set(SENSITIVITY[module.ID]["insensitive_inputs"])
    static = registry.static_argnums(module)
    live = [i for i, x in enumerate(inputs)
            if i not in static and compare._is_float(x) and names[i] not in dead
            and np.ptp(np.asarray(x, np.float32)) > 0]
    return live[-1], names[live[-1]]


@functools.lru_cache(maxsize=None)
def _case(workload_id):
    module = registry.get(workload_id)
    inputs = module.create_inputs(module.CPU_CONFIG, 0)
    reference = compare.make_reference(module, inputs)
    index, name = _dropped_input(module, inputs)
    dropped = list(inputs)
    dropped[index] = jnp.zeros_like(inputs[index])
    dropped_exact, _ = compare.exact_answer(module, tuple(dropped))
    return module, reference, name, dropped_exact


def _as_output(reference, arrays):
    return reference.tree([np.asarray(a, np.float64).astype(np.dtype(d))
                           for a, d in zip(arrays, reference.dtypes)])


def _baseline(reference):
    return _as_output(reference, reference.baseline)


@pytest.mark.parametrize("workload_id", IDS)
def test_exact_answer_and_bf16_baseline_both_pass(workload_id):
    module, reference, _, _ = _case(workload_id)
    assert reference.precision == ("float32" if workload_id == "11p" else "float64")
    exact = compare.compare(reference.tree(compare.rounded_exact(reference)), reference,
                            module.ATOL, module.RTOL)
    assert exact.ok, exact.message
    baseline = compare.compare(_baseline(reference), reference, module.ATOL, module.RTOL)
    assert baseline.ok, baseline.message


@pytest.mark.parametrize("workload_id", IDS)
def test_zeros_and_a_wrong_scale_fail(workload_id):
    module, reference, _, _ = _case(workload_id)
    zeros = compare.compare(_as_output(reference, [np.zeros_like(e) for e in reference.exact]),
                            reference, module.ATOL, module.RTOL)
    assert not zeros.ok
    scaled = compare.compare(_as_output(reference, [1.25 * e for e in reference.exact]),
                             reference, module.ATOL, module.RTOL)
    assert not scaled.ok, "x1.25 passed"


@pytest.mark.parametrize("workload_id", IDS)
def test_a_dropped_term_fails(workload_id):
    module, reference, name, dropped_exact = _case(workload_id)
    outcome = compare.compare(_as_output(reference, dropped_exact), reference,
                              module.ATOL, module.RTOL)
    if workload_id not in UNDETECTABLE_DROPS:
        assert not outcome.ok, f"zeroing {name} passed: worst ratio {outcome.worst_ratio:.3g}"
        return
    assert outcome.ok, f"zeroing {name} fails; remove {workload_id} from UNDETECTABLE_DROPS"
    for d, e, b in zip(dropped_exact, reference.exact, reference.baseline):
        assert np.abs(d - e).max() <= module.ATOL + 3 * np.abs(b - e).max(), (
            f"zeroing {name} is not within bf16 noise; remove {workload_id} from "
            f"UNDETECTABLE_DROPS")


@pytest.mark.parametrize("workload_id", IDS)
def test_the_old_rule_rejected_the_exact_answer(workload_id):
    module, reference, _, _ = _case(workload_id)
    accepted = _old_rule_accepts(compare.rounded_exact(reference), reference.baseline,
                                 module.ATOL, module.RTOL)
    assert accepted == (workload_id not in OLD_RULE_REJECTED_EXACT)
