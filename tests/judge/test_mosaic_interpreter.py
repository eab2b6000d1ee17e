"""mosaic_interpreter.py and tpu_program.py: the judge's own run of the program a TPU would run,
from the kernels' Mosaic bodies, on honest kernels (a fast subset of the sweep in
`scripts/measure_kernel_work.py --interpret`), on the Pallas TPU features the project's
kernels use, and on what it must refuse.

The kernels are the tests' own code, exported in this process as the candidate process
exports a candidate (the judge never does this); the forgeries, through the sandbox, are in
test_hostile.py.
"""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import export
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import judge_kernels as k
from sandbox.candidate import interpret
from judge import compare
from judge import evaluate as judge
from judge.tpu_model import mosaic_interpreter as mi
from judge.tpu_model import tpu_program
from workloads import registry


@pytest.fixture(scope="module", autouse=True)
def harness():
    # The candidate process's per-platform pallas_call lowering (the CPU branch beside the
    # kernel), which every artifact the judge sees has.
    interpret.install()


@pytest.fixture(scope="module")
def evaluator():
    ev = judge.Evaluator(compile_tier=False)
    yield ev
    ev.close()


_EXPORTED = {}


def _export_workload(evaluator, workload_id, code):
    """The reduced-shape artifact, once per kernel (several tests interpret the same one)."""
    key = (workload_id, code)
    if key not in _EXPORTED:
        _EXPORTED[key] = _export_uncached(evaluator, workload_id, code)
    return _EXPORTED[key]


def _export_uncached(evaluator, workload_id, code):
    module = registry.get(workload_id)
    namespace = {}
    exec(compile(code, "candidate.py", "exec"), namespace)
    jitted = jax.jit(namespace["workload"], static_argnums=judge.static_argnums(module))
    args = [s["static"] if "static" in s else
            jax.ShapeDtypeStruct(tuple(s["shape"]), judge._np_dtype(s["dtype"]))
            for s in evaluator._argument_specs(module, module.CPU_CONFIG)]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        return export.export(jitted, platforms=["tpu", "cpu"])(*args)


def _interpret_workload(evaluator, workload_id, code, budget=None):
    """(interpreted outputs, compare.Outcome against the exact reference) on seed 1."""
    module = registry.get(workload_id)
    exp = _export_workload(evaluator, workload_id, code)
    inputs, reference, _ = evaluator.reference(module, module.CPU_CONFIG, 1)
    static = judge.static_argnums(module)
    arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
    got = tpu_program.run(exp.mlir_module(), exp.platforms, arrays, budget)
    return got, compare.compare(reference.tree(got), reference, module.ATOL, module.RTOL)


@pytest.mark.parametrize("workload_id", ["8p", "12p", "9p", "1p"])
def test_a_correct_kernel_interprets_to_the_reference(evaluator, workload_id):
    _, outcome = _interpret_workload(evaluator, workload_id, k.WORKLOAD_KERNELS[workload_id])
    assert outcome.ok, outcome.message


def test_a_kernel_that_computes_something_else_is_seen(evaluator):
    wrong, outcome = _interpret_workload(evaluator, "8p", k.NUMERICS_MISMATCH)
    right, _ = _interpret_workload(evaluator, "8p", k.CORRECT)
    assert not outcome.ok and outcome.kind == "tolerance"
    np.testing.assert_allclose(np.asarray(wrong[0], np.float32),
                               1.5 * np.asarray(right[0], np.float32), rtol=2e-2, atol=2e-2)


def _run(fn, *arrays):
    """The TPU program of `fn` exported for TPU + CPU, interpreted on `arrays`."""
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        exp = export.export(jax.jit(fn), platforms=["tpu", "cpu"])(*specs)
    return tpu_program.run(exp.mlir_module(), exp.platforms, list(arrays))


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_scalar_prefetch_maps_blocks_through_the_prefetched_table():
    # Each output row block i is x's block order[i], as a gather by scalar prefetch does.
    def kernel(order_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def fn(order, x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(4,),
                in_specs=[pl.BlockSpec((8, 128), lambda i, order: (order[i], 0))],
                out_specs=pl.BlockSpec((8, 128), lambda i, order: (i, 0))))(order, x)
    order = np.array([3, 0, 2, 1], np.int32)
    x = _rand((32, 128))
    (got,) = _run(fn, order, x)
    want = np.concatenate([x[8 * b:8 * b + 8] for b in order]) * 2.0
    np.testing.assert_array_equal(got, want)


def test_manual_dmas_from_memory_space_any_are_copies():
    def kernel(x_hbm, o_ref, buf, sem):
        i = pl.program_id(0)
        copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf, sem)
        copy.start()
        copy.wait()
        o_ref[...] = buf[...] + 1.0

    def fn(x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA])(x)
    x = _rand((32, 128))
    (got,) = _run(fn, x)
    np.testing.assert_array_equal(got, x + 1.0)


def test_loops_branches_iota_roll_reductions_and_a_transposed_matmul():
    def kernel(a_ref, b_ref, o_ref):
        a = a_ref[...]
        rows = jax.lax.broadcasted_iota(jnp.int32, a.shape, 0)

        def body(t, acc):
            return acc + jnp.where(rows == t, a, 0.0)
        acc = jax.lax.fori_loop(0, 8, body, jnp.zeros_like(a))
        rolled = pltpu.roll(acc, 3, 1)
        top = jnp.max(rolled, axis=1, keepdims=True)
        prod = jax.lax.dot_general(rolled, b_ref[...], (((1,), (1,)), ((), ())),
                                   preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(0) == 1)
        def _():
            o_ref[...] = prod - top

        @pl.when(pl.program_id(0) != 1)
        def _():
            o_ref[...] = prod

    def fn(a, b):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32), grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)),
                      pl.BlockSpec((128, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(a, b)
    a, b = _rand((16, 128)), _rand((128, 128), seed=1)
    (got,) = _run(fn, a, b)
    rolled = np.roll(a, 3, axis=1)
    want = rolled @ b.T
    want[8:] -= rolled[8:].max(axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_bfloat16_rounds_where_the_kernel_casts_and_glue_around_the_kernel_runs():
    def kernel(x_ref, o_ref):
        o_ref[...] = (x_ref[...].astype(jnp.float32) * 3.0).astype(o_ref.dtype)

    def fn(x):
        y = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                           grid=(1,))(x)
        return (y.reshape(4, 8, 128).sum(axis=1) + 1.0).astype(jnp.float32)
    x = _rand((32, 128), ml_dtypes.bfloat16)
    (got,) = _run(fn, x)
    y = (x.astype(np.float32) * 3.0).astype(ml_dtypes.bfloat16).astype(np.float32)
    # The sum and the +1 are bfloat16 in JAX too: within a bf16 ulp or two of exact.
    np.testing.assert_allclose(got, y.reshape(4, 8, 128).sum(axis=1) + 1.0, rtol=2e-2, atol=2e-2)


def test_an_op_it_does_not_know_is_unsupported_by_name(monkeypatch):
    monkeypatch.delitem(mi._UNARY, "math.exp")

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.exp(x_ref[...])

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(1,))(x)
    with pytest.raises(mi.Unsupported, match="the op math.exp"):
        _run(fn, _rand((8, 128)))


def test_the_budget_bounds_a_hostile_body(evaluator):
    # A body that would make the judge loop for long is stopped by counting, not by a clock.
    with pytest.raises(mi.OverBudget):
        _interpret_workload(evaluator, "8p", k.CORRECT, mi.Budget(ops=1000))
    with pytest.raises(mi.OverBudget):
        _interpret_workload(evaluator, "8p", k.CORRECT, mi.Budget(elements=1e6))


def test_only_the_tpu_branch_of_the_platform_dispatch_runs(monkeypatch):
    # The CPU branch (the HLO interpreter's while loop over dynamic slices) is never
    # evaluated, not one op of it.
    seen = []
    original = tpu_program._Program.op

    def spy(self, op, env):
        seen.append(op.name)
        return original(self, op, env)
    monkeypatch.setattr(tpu_program._Program, "op", spy)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(4,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    x = _rand((32, 128))
    (got,) = _run(fn, x)
    np.testing.assert_array_equal(got, x + 1.0)
    assert "stablehlo.custom_call" in seen
    assert "stablehlo.while" not in seen and "stablehlo.dynamic_slice" not in seen



def test_an_aliased_output_starts_as_its_input_and_a_partial_block_writes_inside_only():
    # 20 rows in blocks of 8: the last block is partial; only rows 0-7 are written, so rows
    # 8-19 keep the aliased input's values.
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def fn(x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            input_output_aliases={0: 0})(x)

    def partial(x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(3,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    x = _rand((20, 128))
    (got,) = _run(fn, x)
    np.testing.assert_array_equal(got[:8], x[:8] * 2.0)
    np.testing.assert_array_equal(got[8:], x[8:])
    (got,) = _run(partial, x)
    np.testing.assert_array_equal(got, x * 2.0)


def test_a_dma_lands_at_its_wait_not_at_its_start():
    # Reading the destination between start and wait reads what a TPU may still hold there
    # (here the scratch's uninitialised random bits), not the copy: a kernel that relies on the
    # copy having landed is wrong on a chip, and the two runs' different fills show it.
    def kernel(x_hbm, o_ref, buf, sem):
        copy = pltpu.make_async_copy(x_hbm, buf, sem)
        copy.start()
        o_ref[...] = buf[...]
        copy.wait()

    def fn(x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
            scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA])(x)
    with pytest.raises(mi.Nondeterministic, match="never wrote"):
        _run(fn, _rand((8, 128)))


def _double(x):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(1,))(x)


def test_glue_beyond_the_projects_own_runs_on_xla_op_by_op():
    # A sort (its comparator reads constants defined outside it), a scatter-add and a cumsum
    # (a reduce_window) around a kernel: what a TPU's XLA computes, so a kernel behind them is
    # still checked (docs/verification.md 1b).
    def fn(x, rows):
        y = _double(x)
        return jnp.sort(y, axis=1), y.at[rows].add(1.0), jnp.cumsum(y, axis=0)
    x, rows = _rand((16, 128)), np.array([3, 3, 9], np.int32)
    got_sorted, got_added, got_cumsum = _run(fn, x, rows)
    np.testing.assert_array_equal(got_sorted, np.sort(x * 2.0, axis=1))
    want = x * 2.0
    np.add.at(want, rows, 1.0)
    np.testing.assert_array_equal(got_added, want)
    np.testing.assert_allclose(got_cumsum, np.cumsum(x * 2.0, axis=0), rtol=1e-5, atol=1e-5)


def test_a_loop_around_a_kernel_runs_the_kernel_every_iteration():
    def fn(x, n):
        return jax.lax.fori_loop(0, n[0], lambda i, y: _double(y), x)
    x = _rand((8, 128))
    (got,) = _run(fn, x, np.array([3], np.int32))
    np.testing.assert_array_equal(got, x * 8.0)


def test_a_grid_whose_size_is_data_takes_it_from_the_custom_calls_first_operand():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    def fn(x, n):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((16, 128), x.dtype), grid=(n[0],),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i % 2, 0)))(x)
    x = _rand((32, 128))
    (got,) = _run(fn, x, np.array([2], np.int32))
    np.testing.assert_array_equal(got, x[:16] + 1.0)
    (got,) = _run(fn, x, np.array([4], np.int32))  # blocks 2 and 3 land on 0 and 1
    np.testing.assert_array_equal(got, x[16:] + 1.0)
    # Blocks the grid never reaches stay unwritten: random, so the two runs differ.
    with pytest.raises(mi.Nondeterministic):
        _run(fn, x, np.array([1], np.int32))


def test_glue_with_effects_or_a_backends_own_algorithm_is_unsupported_by_name():
    def fn(x):
        noise = jax.lax.rng_uniform(jnp.float32(0), jnp.float32(1), x.shape)
        return _double(x) + noise * 0
    with pytest.raises(mi.Unsupported, match="stablehlo.rng"):
        _run(fn, _rand((8, 128)))


def test_blocks_stay_resident_while_their_index_does_not_change_as_on_a_tpu():
    # An input block is fetched only when its index changes, so a kernel's write into it is
    # what the next step with the same index reads: the HBM copy is not fetched again.
    def scribbles(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0
        x_ref[...] = jnp.zeros_like(x_ref)

    def fn(x):
        return pl.pallas_call(
            scribbles, out_shape=jax.ShapeDtypeStruct((16, 128), x.dtype), grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    x = _rand((8, 128))
    (got,) = _run(fn, x)
    np.testing.assert_array_equal(got[:8], x * 2.0)
    np.testing.assert_array_equal(got[8:], np.zeros_like(x))


def test_an_output_block_is_never_fetched_so_accumulating_over_a_revisit_is_refused():
    # Blocks 0, 1, 0, 1: the second visit of each starts from nothing a chip would hold, not
    # from what the first visit wrote back; a kernel that adds to it is wrong on a TPU.
    def revisits(x_ref, o_ref):
        @pl.when(pl.program_id(0) < 2)
        def _():
            o_ref[...] = x_ref[...]

        @pl.when(pl.program_id(0) >= 2)
        def _():
            o_ref[...] += x_ref[...]

    def fn(x):
        return pl.pallas_call(
            revisits, out_shape=jax.ShapeDtypeStruct((16, 128), x.dtype), grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i % 2, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i % 2, 0)))(x)
    with pytest.raises(mi.Nondeterministic):
        _run(fn, _rand((16, 128)))


def test_pooling_running_reductions_and_an_argmax_around_a_kernel():
    # A max pool (a strided window), a running max (numpy), and an argmax (a reduce of two
    # operands: XLA alone).
    def fn(x):
        y = _double(x)
        pooled = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID")
        return pooled, jax.lax.cummax(y, axis=1), jnp.argmax(y, axis=1)
    x = _rand((8, 128))
    pooled, running, best = _run(fn, x)
    y = x * 2.0
    np.testing.assert_array_equal(pooled, y.reshape(4, 2, 64, 2).max(axis=(1, 3)))
    np.testing.assert_array_equal(running, np.maximum.accumulate(y, axis=1))
    np.testing.assert_array_equal(best, np.argmax(y, axis=1))


def _attention(q, k, v, causal):
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64))
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v.astype(np.float64))


def _jax_kernel(name):
    """JAX's own TPU Pallas kernels, which LLM kernels imitate: what they use beyond the
    project's kernels (their grids, index maps, scratch and masks) must not be a refusal."""
    from jax.experimental.pallas.ops.tpu import flash_attention, matmul
    from jax.experimental.pallas.ops.tpu.splash_attention import (
        splash_attention_kernel as splash, splash_attention_mask as masks)
    if name == "matmul":
        return lambda a, b: matmul.matmul(a, b, block_shape=(128, 128))
    if name == "flash_attention":
        return lambda q, k, v: flash_attention.flash_attention(q, k, v, sm_scale=1.0)
    mask = masks.MultiHeadMask([masks.CausalMask((256, 256)) for _ in range(2)])
    kernel = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1,
                                    block_sizes=splash.BlockSizes.get_default())
    return lambda q, k, v: jax.vmap(kernel)(q, k, v)


@pytest.mark.parametrize("name", ["matmul", "flash_attention", "splash_attention_causal"])
def test_jaxs_own_tpu_kernels_interpret_to_their_reference(name):
    if name == "matmul":
        args = (_rand((256, 512)), _rand((512, 256), seed=1))
        want = args[0].astype(np.float64) @ args[1]
    else:
        args = tuple(_rand((1, 2, 256, 128), seed=s) for s in range(3))
        want = _attention(*args, causal=name.endswith("causal"))
    (got,) = _run(_jax_kernel(name), *args)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_an_input_the_export_drops_does_not_shift_the_others():
    # jax.export drops an unused input from main (module_kept_var_idx); the judge still has
    # every input, so it must pick the kept ones or feed `x` from `unused`.
    def fn(unused, x):
        return _double(x)
    unused, x = _rand((8, 128), seed=1), _rand((8, 128), seed=2)
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (unused, x)]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        exp = export.export(jax.jit(fn), platforms=["tpu", "cpu"])(*specs)
    assert sorted(exp.module_kept_var_idx) == [1]
    (got,) = tpu_program.run(exp.mlir_module(), exp.platforms, [unused, x],
                             kept=exp.module_kept_var_idx)
    np.testing.assert_array_equal(got, x * 2.0)
    with pytest.raises(mi.Unsupported, match="takes 1 arrays, 2 were given"):
        tpu_program.run(exp.mlir_module(), exp.platforms, [unused, x])


def test_a_transpose_inside_the_kernel_and_a_kernel_without_a_grid():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...].T + 1.0

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape[::-1], x.dtype))(x)
    x = _rand((8, 128))
    (got,) = _run(fn, x)
    np.testing.assert_array_equal(got, x.T + 1.0)
