"""structure.py: the rule that heavy work runs inside Pallas, on the work the judge's own
interpretation of the TPU program executes (tpu_program.run with a structure.Executed), and the
one-program rule on platform branches. The programs are the tests' own, exported in this process
as the candidate process exports a candidate; hostile ones through the sandbox are in
test_hostile_work.py.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sandbox.candidate import interpret
from judge import structure
from judge.tpu_model import tpu_program


@pytest.fixture(scope="module", autouse=True)
def harness():
    interpret.install()


def _export(fn, *arrays, platforms=("tpu", "cpu")):
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        return export.export(jax.jit(fn), platforms=list(platforms))(*specs)


def _executed(fn, *arrays):
    exp = _export(fn, *arrays)
    executed = structure.Executed()
    outputs = tpu_program.run(exp.mlir_module(), exp.platforms, list(arrays), None, executed)
    return executed, outputs, structure.measure(exp.mlir_module())


def _copy(x):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(x.shape[0] // 8,),
                          in_specs=[pl.BlockSpec((8, x.shape[1]), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((8, x.shape[1]), lambda i: (i, 0)))(x)


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


M, K, N, STEP = 32, 256, 128, 64


def _gemm_in_a_loop(a, b, bound):
    """A @ B in XLA as K / STEP rank-STEP updates, in a loop of `bound`'s kind."""
    def update(k, acc):
        x = jax.lax.dynamic_slice_in_dim(a, k * STEP, STEP, axis=1)
        y = jax.lax.dynamic_slice_in_dim(b, k * STEP, STEP, axis=0)
        return acc + x @ y
    zero = jnp.zeros((M, N), jnp.float32)
    if bound == "count-down":
        _, acc = jax.lax.while_loop(lambda s: s[0] > 0,
                                    lambda s: (s[0] - 1, update(s[0] - 1, s[1])),
                                    (jnp.int32(K // STEP), zero))
    else:  # a trip count the data decides
        n = K // STEP + (a[0, 0] * 0).astype(jnp.int32)
        _, acc = jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, update(*s)),
                                    (jnp.int32(0), zero))
    return acc


@pytest.mark.parametrize("bound", ["count-down", "data"])
def test_xla_work_in_a_loop_counts_every_trip_it_ran(bound):
    a, b = _rand((M, K)), _rand((K, N), 1)
    executed, (got,), static = _executed(lambda a, b: _copy(_gemm_in_a_loop(a, b, bound)), a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    assert executed.outside.mxu_flops == 2.0 * M * N * K      # all K / STEP trips
    assert executed.kernel_runs == 1 and executed.inside.total() == 0
    # The static count could only count the loop once: a quarter of the GEMM.
    assert static.unbounded_loops >= 1
    assert static.outside.mxu_flops == 2.0 * M * N * STEP
    verdict, kind, message = structure.check(static, True, None, executed)
    assert (verdict, kind) == ("no_pallas", "outside_pallas")
    assert "100% of its work runs in XLA" in message and "executed" in message


def _gemm_kernel(a, b, n, dead=False):
    """A @ B inside a kernel, over K in chunks, the trip count `n` read from scalar memory; the
    first grid step also runs a branch; `dead`: and a matmul into scratch no one reads."""
    def kernel(n_ref, a_ref, b_ref, o_ref, s_ref):
        def chunk(k, acc):
            x = a_ref[:, pl.ds(pl.multiple_of(k * STEP, STEP), STEP)]
            y = b_ref[pl.ds(pl.multiple_of(k * STEP, STEP), STEP), :]
            return acc + jnp.dot(x, y, preferred_element_type=jnp.float32)
        o_ref[...] = jax.lax.fori_loop(0, n_ref[0], chunk, jnp.zeros((8, N), jnp.float32))

        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = o_ref[...] * 1.0
        if dead:
            s_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(M // 8,),
            in_specs=[pl.BlockSpec((8, K), lambda i, n: (i, 0)),
                      pl.BlockSpec((K, N), lambda i, n: (0, 0))],
            out_specs=pl.BlockSpec((8, N), lambda i, n: (i, 0)),
            scratch_shapes=[pltpu.VMEM((8, N), jnp.float32)]))(n, a, b)


def test_a_kernels_work_counts_what_its_steps_really_ran():
    a, b = _rand((M, K)), _rand((K, N), 1)
    for trips in (K // STEP, 2):    # the whole K, or half of it: the data decides
        executed, (got,), _ = _executed(_gemm_kernel, a, b, np.array([trips], np.int32))
        np.testing.assert_allclose(got, a[:, :trips * STEP] @ b[:trips * STEP], rtol=1e-4,
                                   atol=1e-4)
        assert executed.inside.mxu_flops == 2.0 * M * N * STEP * trips
        # The loop's adds (8 x N per trip and step) and the branch's multiply (one step).
        assert executed.inside.elementwise_elems == (M // 8) * trips * 8 * N + 8 * N
        assert executed.outside.total() == 0


def test_a_matmul_whose_result_reaches_no_output_is_not_work():
    a, b = _rand((M, K)), _rand((K, N), 1)
    executed, _, _ = _executed(lambda a, b, n: _gemm_kernel(a, b, n, dead=True), a, b,
                               np.array([K // STEP], np.int32))
    assert executed.inside.mxu_flops == 2.0 * M * N * K
    assert executed.dead_mxu_flops == 2.0 * M * N * K


def _row_sums(x, w):
    """x @ w for a vector w, inside a kernel (every column of its block holds the row sum)."""
    def kernel(x_ref, w_ref, o_ref):
        total = jnp.sum(x_ref[...] * w_ref[...], axis=1, keepdims=True)
        o_ref[...] = jnp.broadcast_to(total, o_ref.shape)
    rows, cols = x.shape
    out = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32), grid=(rows // 8,),
        in_specs=[pl.BlockSpec((8, cols), lambda i: (i, 0)),
                  pl.BlockSpec((1, cols), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x, w)
    return out[:, 0]


def test_an_exact_rewrite_is_judged_on_the_work_it_does():
    # sum(x @ W.T, axis=1) == x @ sum(W, axis=0): a GEMV in the kernel, W's column sums in XLA.
    x, w = _rand((64, 256)), _rand((64, 256), 1)
    executed, (got,), static = _executed(
        lambda x, w: _row_sums(x, jnp.sum(w, axis=0, keepdims=True)), x, w)
    np.testing.assert_allclose(got, np.sum(x @ w.T, axis=1), rtol=1e-3, atol=1e-3)
    assert executed.outside.reduce_elems == w.size
    assert structure.outside_fraction(executed.outside, executed.inside) < 0.5
    assert structure.check(static, True, None, executed) is None


def test_light_glue_beside_a_copy_kernel_is_not_heavy_work():
    # A gather or a cache update: the honest kernel copies, and one op per output element
    # of XLA beside it is not the workload's work.
    x = _rand((16, 128))
    executed, _, static = _executed(lambda x: _copy(x) * 2.0, x)
    assert executed.outside.elementwise_elems == x.size and executed.inside.total() == 0
    assert structure.check(static, True, None, executed) is None
    executed, _, static = _executed(lambda x: _copy(x) * 2.0 + 1.0, x)
    assert structure.check(static, True, None, executed)[1] == "outside_pallas"


def test_a_kernel_that_never_runs_is_no_kernel():
    x = _rand((16, 128))
    executed, _, static = _executed(
        lambda x: jax.lax.cond(x[0, 0] > 1e30, _copy, lambda y: y * 2.0, x), x)
    assert executed.kernel_runs == 0 and static.kernels == 1
    assert structure.check(static, True, None, executed)[1] == "no_kernel"


def test_xla_may_branch_on_the_platform_only_into_the_same_program():
    x = _rand((8, 128))
    # JAX lowers a matmul per platform, into identical branches: one program.
    same = structure.measure(_export(lambda x: _copy(x @ x.T), x).mlir_module())
    assert same.platform_branches == []
    assert structure.check(same, require_pallas=False) is None   # the integrity rules hold
    differs = structure.measure(_export(
        lambda x: _copy(jax.lax.platform_dependent(x, cpu=lambda y: y * 2.0,
                                                   tpu=lambda y: y + 1.0)), x).mlir_module())
    assert differs.platform_branches == ["XLA code that computes differently per platform"]
    verdict, kind, message = structure.check(differs, True)
    assert (verdict, kind) == ("runtime_error", "platform_dependent")
    assert "write one program" in message


def test_a_case_on_a_value_computed_from_the_platform_is_a_platform_split():
    # The index converted and offset before the case: still the platform deciding.
    text = '''
    module @jit_workload {
      func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"},
                             %arg1: tensor<4xf32>) -> tensor<4xf32> {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %i = stablehlo.add %arg0, %one : tensor<i32>
        %0 = "stablehlo.case"(%i) ({
          %2 = stablehlo.add %arg1, %arg1 : tensor<4xf32>
          stablehlo.return %2 : tensor<4xf32>
        }, {
          %3 = stablehlo.multiply %arg1, %arg1 : tensor<4xf32>
          stablehlo.return %3 : tensor<4xf32>
        }) : (tensor<i32>) -> tensor<4xf32>
        return %0 : tensor<4xf32>
      }
    }'''
    measured = structure.measure(text)
    assert measured.platform_branches == ["XLA code that computes differently per platform"]
