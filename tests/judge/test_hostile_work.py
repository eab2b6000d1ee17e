"""Issue 21 items 1 and 3, issue 26's hollow-kernel rule, through the whole judge (the candidate
in the sandbox, an in-process Evaluator): one program with one semantics, and heavy work counted
where the judge's own run of the TPU program executed it.

  * glue that computes differently by platform, where a numpy model of the TPU would differ from
    XLA:TPU (saturation, division by zero, subnormals): refused as a platform split, and, with
    that rule off, the judge's XLA-computed glue still sees the zeros a TPU would return;
  * a GEMM done by XLA in a loop counting down or bound by the data, beside a token kernel:
    `no_pallas`, every trip counted;
  * exact rewrites that do less work than the baseline: `correct`;
  * a kernel right only on the workload's usual magnitudes fails on the judge's inputs of
    another scale (issue 21 item 7; workloads/input_variants.py).
Kernels: hostile_kernels.py (16, 17); the rewrites are here, over fake_workloads.rows.
"""
import jax.numpy as jnp
import pytest

import fake_workloads
import hostile_kernels as h
from judge import evaluate as judge
from judge import structure
from workloads import input_variants


def run(code, **kwargs):
    return judge.evaluate("8p", code, **kwargs)


_ZEROS_ON_A_TPU = ["ZEROS_ON_A_TPU_BY_SATURATION", "ZEROS_ON_A_TPU_BY_DIVISION_BY_ZERO",
                   "ZEROS_ON_A_TPU_BY_SUBNORMALS"]


@pytest.mark.parametrize("name", _ZEROS_ON_A_TPU)
def test_glue_that_differs_by_platform_is_refused(name):
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("runtime_error", "structure"), result
    assert result["error_signature"].startswith("structure:platform_dependent:"), result
    assert "XLA code that computes differently per platform" in result["error"]


@pytest.mark.parametrize("name", _ZEROS_ON_A_TPU)
def test_without_the_platform_rule_the_judges_xla_glue_sees_the_tpus_zeros(name, monkeypatch):
    # Every platform case taken for one program: the CPU branch computes the GEMM, and the
    # judge's run of the TPU path, its glue on XLA with XLA:TPU's semantics, gets zeros.
    monkeypatch.setattr(structure, "_branch_signature", lambda ops: ())
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_kernel_differs:"), result


@pytest.mark.parametrize("name", ["XLA_GEMM_IN_A_COUNT_DOWN_LOOP",
                                  "XLA_GEMM_IN_A_DATA_BOUND_LOOP"])
def test_xla_work_in_a_loop_beside_a_token_kernel_is_no_pallas(name):
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("no_pallas", "structure"), result
    assert result["error_signature"].startswith("structure:outside_pallas:"), result
    assert result["outside_pallas_fraction"] == 1.0
    executed = result["structure"]["executed"]
    # Every trip of the loop: the whole GEMM (1024 x 2048 x 1024 at the reduced shapes).
    assert executed["outside"]["mxu_flops"] == 2.0 * 1024 * 2048 * 1024
    assert result["structure"]["counted"] == "executed"


# sum(x @ y.T, axis=1) == x @ sum(y, axis=0): a GEMV in the kernel, y's column sums in XLA.
REWRITE_AS_A_GEMV = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _row_sums(x_ref, w_ref, o_ref):
    total = jnp.sum(x_ref[...].astype(jnp.float32) * w_ref[...], axis=1, keepdims=True)
    o_ref[...] = jnp.broadcast_to(total, o_ref.shape)

def workload(x, y):
    R, C = x.shape
    w = jnp.sum(y.astype(jnp.float32), axis=0, keepdims=True)
    out = pl.pallas_call(
        _row_sums, out_shape=jax.ShapeDtypeStruct((R, 128), jnp.float32), grid=(R // 32,),
        in_specs=[pl.BlockSpec((32, C), lambda i: (i, 0)), pl.BlockSpec((1, C), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((32, 128), lambda i: (i, 0)))(x, w)
    return out[:, 0].astype(x.dtype)
'''


@pytest.fixture
def rowsum_workload(monkeypatch):
    return fake_workloads.install(monkeypatch, fake_workloads.rows(
        "rowsum_test", lambda x, y: (x @ y.T).sum(axis=1)))


@pytest.fixture
def unused_matmul_workload(monkeypatch):
    # The matmul's result reaches the output only multiplied by zero: never used.
    return fake_workloads.install(monkeypatch, fake_workloads.rows(
        "unused_matmul_test", lambda x, y: (x + y) + 0 * (x @ y.T).sum()))


def test_a_gemm_rewritten_as_a_gemv_is_correct(rowsum_workload):
    # The rule that compared the kernel with the baseline's FLOPs called this hollow: the
    # program does 2% of the baseline's GEMM.
    result = judge.evaluate(rowsum_workload.ID, REWRITE_AS_A_GEMV)
    assert result["verdict"] == "correct", result["error"]
    assert result["outside_pallas_fraction"] < 0.5


def test_dropping_a_matmul_the_workload_never_uses_is_correct(unused_matmul_workload):
    result = judge.evaluate(unused_matmul_workload.ID,
                            fake_workloads.ROWS_KERNEL.replace("BODY", "x + y"))
    assert result["verdict"] == "correct", result["error"]
    assert result["outside_pallas_fraction"] == 0.0


# Right only where |x| stays below 6, as N(0, 1) inputs always do: relu(x) + y, with x clipped.
_RIGHT_ON_USUAL_MAGNITUDES = "jnp.clip(x, 0.0, 6.0) + y"


@pytest.fixture
def relu_workload(monkeypatch):
    return fake_workloads.install(monkeypatch, fake_workloads.rows(
        "relu_test", lambda x, y: jnp.maximum(x, 0) + y))


def test_a_kernel_right_only_on_the_usual_magnitudes_fails_on_other_scales(relu_workload):
    code = fake_workloads.ROWS_KERNEL.replace("BODY", _RIGHT_ON_USUAL_MAGNITUDES)
    # The premise: on the workload's own N(0, 1) draws it passes.
    usual = judge.evaluate(relu_workload.ID, code, seeds=(0,))
    assert usual["verdict"] == "correct", usual["error"]
    # Seed 4 in second place is the variant scaled by 4 (input_variants.variant_for).
    assert input_variants.variant_for(4, 1) == 1 and input_variants.VARIANTS[1] == (4.0, 0.0)
    result = judge.evaluate(relu_workload.ID, code, seeds=(0, 4))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert "seed 4 (inputs scaled by 4)" in result["error"]
    honest = judge.evaluate(relu_workload.ID,
                            fake_workloads.ROWS_KERNEL.replace("BODY", "jnp.maximum(x, 0) + y"),
                            seeds=(0, 4))
    assert honest["verdict"] == "correct", honest["error"]
