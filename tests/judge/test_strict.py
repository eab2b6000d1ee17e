"""Strict verification: each rule of docs/verification.md with the cheating kernel it catches."""
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fake_workloads
import judge_kernels as k
from judge.compare import NORM_RTOL
from judge.evaluate import evaluate


# -- fresh seeds -------------------------------------------------------------------------------

def test_seeds_are_drawn_fresh_for_every_evaluation_and_reported():
    first, second = evaluate("8p", k.CORRECT), evaluate("8p", k.CORRECT)
    assert first["verdict"] == second["verdict"] == "correct", (first, second)
    assert len(first["seeds"]) == 2 and len(first["check_seeds"]) == 1
    assert first["seeds"] != second["seeds"] and first["check_seeds"] != second["check_seeds"]
    # A replay uses exactly the seeds it is given (the check seed is always fresh).
    replay = evaluate("8p", k.CORRECT, seeds=(1234, 99))
    assert replay["seeds"] == [1234, 99]


def test_memorised_seed_0_output_fails_on_the_judges_seeds():
    result = evaluate("8p", k.MEMORISED_SEED_0, (1234, 99))
    assert result["verdict"] == "numerics_mismatch", result["error"]
    assert "seed" in result["error"]


# -- NaN pre-fill of outputs -------------------------------------------------------------------

def test_kernel_that_skips_an_output_block_fails_on_the_nan_prefill():
    result = evaluate("8p", k.SKIPS_FIRST_OUTPUT_BLOCK, (0,))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert "NaN" in result["error"] and "never writes" in result["error"]
    assert result["error_signature"].startswith("numerics:nan:")


def test_kernel_that_skips_a_later_output_block_fails_on_stale_values():
    # Interpret mode reuses the output block buffer, so a skipped block after a written one holds
    # that block's values, not NaN; on random inputs they differ from the reference.
    result = evaluate("8p", k.SKIPS_LAST_OUTPUT_BLOCK, (0,))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert result["error_signature"].startswith("numerics:tolerance:")


# -- exact reference (compare.py) ----------------------------------------------------------------

@pytest.fixture
def cancel_workload(monkeypatch):
    """(x + y) - y in bf16 with |y| ~ 100: the bf16 baseline rounds x + y to bf16's 0.5 ulp and
    is off by up to 0.5, while the exact answer is x. A kernel computing in float32 returns x."""
    return fake_workloads.install(monkeypatch, fake_workloads.rows(
        "cancel_test", lambda x, y: (x + y) - y, y_scale=100))


_CANCEL_KERNEL = fake_workloads.ROWS_KERNEL


def test_the_judge_accepts_the_exact_answer_where_the_bf16_baseline_is_far_off(cancel_workload):
    # The premise: at these inputs the bf16 baseline is further from the exact answer than
    # atol + rtol*|exact|, so the rule "compare with the baseline" rejected the exact kernel.
    x, y = cancel_workload.create_inputs(cancel_workload.CPU_CONFIG, 0)
    off = np.abs(np.asarray(cancel_workload.workload(x, y), np.float64) - np.asarray(x, np.float64))
    assert (off > 0.01 + 0.01 * np.abs(np.asarray(x, np.float64))).mean() > 0.5
    result = evaluate(cancel_workload.ID, _CANCEL_KERNEL.replace("BODY", "(x + y) - y"))
    assert result["verdict"] == "correct", result["error"]
    assert result["max_abs_err"] == 0.0  # measured against the exact answer, not the baseline


def test_the_baseline_error_widens_the_bound_only_where_the_baseline_errs(cancel_workload):
    # Adding 0.05 is within the baseline's own error at most elements, but not where |y| is
    # small and the baseline is (nearly) exact: the slack is the baseline's error per element.
    result = evaluate(cancel_workload.ID, _CANCEL_KERNEL.replace("BODY", "x + 0.05"))
    assert result["verdict"] == "numerics_mismatch", result
    assert result["error_signature"].startswith("numerics:tolerance:"), result["error"]
    assert "baseline" in result["error"] and "exact" in result["error"]


# -- norm-relative bound -----------------------------------------------------------------------

def _softmax_module():
    """A 38k-style workload: softmax over 2048 columns, every output ~5e-4 << atol=1e-2."""
    module = types.ModuleType("wl_softmax_test")
    module.ID, module.NAME = "softmax_test", "Softmax"
    module.CPU_CONFIG = {"rows": 64, "cols": 2048}
    module.CONFIG = {"rows": 1024, "cols": 2048}
    module.ATOL, module.RTOL = 0.01, 0.01

    def create_inputs(config=module.CPU_CONFIG, seed=0, dtype=jnp.bfloat16):
        return (jax.random.normal(jax.random.key(seed), (config["rows"], config["cols"]), dtype),)

    module.create_inputs = create_inputs
    module.workload = lambda x: jax.nn.softmax(x.astype(jnp.float32), axis=-1).astype(x.dtype)
    return module


_SOFTMAX_KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    BODY

def workload(x):
    R, C = x.shape
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(R // 32,),
        in_specs=[pl.BlockSpec((32, C), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((32, C), lambda i: (i, 0)))(x)
'''
SOFTMAX_CORRECT = _SOFTMAX_KERNEL.replace(
    "BODY", "e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))\n"
            "    o_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(o_ref.dtype)")
# Softmax at a temperature of 1000: nearly uniform 1/C, within atol of every element, and it
# carries almost no information about x.
SOFTMAX_UNIFORM = _SOFTMAX_KERNEL.replace(
    "BODY", "e = jnp.exp((x - jnp.max(x, axis=-1, keepdims=True)) * 1e-3)\n"
            "    o_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(o_ref.dtype)")


@pytest.fixture
def softmax_workload(monkeypatch):
    return fake_workloads.install(monkeypatch, _softmax_module()).ID


def test_near_zero_output_cannot_pass_with_a_constant(softmax_workload):
    result = evaluate(softmax_workload, SOFTMAX_UNIFORM, (0, 1))
    assert result["verdict"] == "numerics_mismatch", result
    assert result["max_abs_err"] < 0.01  # the elementwise atol alone would have passed it
    assert "||got - exact|| / ||exact||" in result["error"]
    assert result["error_signature"].startswith("numerics:norm:")


def test_correct_softmax_passes_the_norm_bound(softmax_workload):
    result = evaluate(softmax_workload, SOFTMAX_CORRECT, (0, 1))
    assert result["verdict"] == "correct", result["error"]


def test_norm_bound_is_a_few_bf16_ulps():
    # The bound itself and its arithmetic are tested in test_compare.py.
    assert 0 < NORM_RTOL <= 0.05


# -- pallas_call required ----------------------------------------------------------------------

def test_no_pallas_is_not_correct_by_default_and_can_be_relaxed():
    strict = evaluate("8p", k.NO_PALLAS, (0,))
    assert (strict["verdict"], strict["stage"]) == ("no_pallas", "trace")
    relaxed = evaluate("8p", k.NO_PALLAS, (0,), require_pallas=False)
    assert relaxed["outside_pallas_fraction"] == pytest.approx(1.0, abs=0.01)
    assert relaxed["verdict"] == "correct", relaxed["error"]


# -- static arguments --------------------------------------------------------------------------

def test_static_argnums_are_traced_and_run_as_python_values(monkeypatch):
    module = types.ModuleType("wl_static_test")
    module.ID, module.CPU_CONFIG, module.ATOL, module.RTOL = "static_test", {"n": 256}, 0.01, 0.01
    module.CONFIG = {"n": 1024}
    module.STATIC_ARGNUMS = (1,)
    module.static_args = lambda config=module.CONFIG: (4,)

    def create_inputs(config=module.CPU_CONFIG, seed=0, dtype=jnp.bfloat16):
        return jax.random.normal(jax.random.key(seed), (config["n"], 128), dtype), 4

    def workload(x, repeats):
        return jnp.tile(x, (1, repeats))  # `repeats` must be a Python int to shape the output

    module.create_inputs, module.workload = create_inputs, workload
    fake_workloads.install(monkeypatch, module)
    code = '''
import jax
from jax.experimental import pallas as pl

def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def workload(x, repeats):
    n, d = x.shape
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((n, d * repeats), x.dtype), grid=(repeats,),
        in_specs=[pl.BlockSpec((n, d), lambda j: (0, 0))],
        out_specs=pl.BlockSpec((n, d), lambda j: (0, j)))(x)
'''
    result = evaluate("static_test", code, (0, 1))
    assert result["verdict"] == "correct", result["error"]
