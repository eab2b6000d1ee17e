"""kernel_work.py: the work read from a Pallas kernel's Mosaic body, and structure.py's rules
that use it (cpu_branch_not_the_kernel, the static count standing in for outside_pallas) on
honest kernels.

The kernels here are the tests' own code, exported in this process exactly as the candidate
process exports a candidate (the judge never does this); the hostile ones, through the sandbox,
are in test_hostile.py.
"""
import jax
import jax.numpy as jnp
import pytest
from jax import export
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir

import judge_kernels as k
from sandbox.candidate import interpret
from judge import evaluate as judge
from judge.tpu_model import kernel_work
from judge import structure
from workloads import registry


@pytest.fixture(scope="module")
def evaluator():
    interpret.install()
    ev = judge.Evaluator(compile_tier=False)
    yield ev
    ev.close()


def _export(evaluator, workload_id, code, platforms, config=None):
    module = registry.get(workload_id)
    config = module.CPU_CONFIG if config is None else config
    namespace = {}
    exec(compile(code, "candidate.py", "exec"), namespace)
    jitted = jax.jit(namespace["workload"], static_argnums=judge.static_argnums(module))
    args = [s["static"] if "static" in s else
            jax.ShapeDtypeStruct(tuple(s["shape"]), judge._np_dtype(s["dtype"]))
            for s in evaluator._argument_specs(module, config)]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        return export.export(jitted, platforms=platforms)(*args)


def _bodies(exported):
    """[(backend_config, outputs)] of the artifact's tpu_custom_calls."""
    found = []
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(exported.mlir_module())
        stack = [module.operation]
        while stack:
            op = stack.pop()
            if op.name == "stablehlo.custom_call":
                found.append((ir.StringAttr(op.attributes["backend_config"]).value,
                              len(op.results)))
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(o.operation for o in block.operations)
    return found


def _gemm_kernel(body):
    return f'''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _kernel(a_ref, b_ref, o_ref, s_ref):
{body}

def workload(A, B):
    M, K = A.shape
    N = B.shape[1]
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 128, N // 128),
        in_specs=[pl.BlockSpec((128, K), lambda i, j: (i, 0)),
                  pl.BlockSpec((K, 128), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)),
        scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)])(A, B)
'''


def _measure(evaluator, code):
    (config, outputs), = _bodies(_export(evaluator, "8p", code, ["tpu"]))
    return kernel_work.measure(config, outputs)


_M, _K, _N = (registry.get("8p").CPU_CONFIG[key] for key in ("M", "K", "N"))
GEMM_FLOPS = 2 * _M * _K * _N  # 8p at CPU_CONFIG


def test_a_gemm_kernel_does_the_gemm_over_its_grid(evaluator):
    work = _measure(evaluator, k.CORRECT)  # k.GEMM_BLOCKS, a f32 accumulator in scratch
    bm, bn, bk = k.GEMM_BLOCKS
    grid = (_M // bm, _N // bn, _K // bk)
    assert work.grid == grid
    assert work.mxu_flops == GEMM_FLOPS
    assert work.dead_mxu_flops == 0
    # The accumulate (one add per element per step) and the final scale on the last K step.
    steps, last_k_steps = grid[0] * grid[1] * grid[2], grid[0] * grid[1]
    assert work.elementwise_elems == bm * bn * steps + bm * bn * last_k_steps


def test_a_branch_counts_on_exactly_the_grid_steps_that_take_it(evaluator):
    work = _measure(evaluator, _gemm_kernel('''
    o_ref[...] = jnp.zeros_like(o_ref)
    @pl.when(pl.program_id(1) == 1)
    def _():
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...],
                             preferred_element_type=jnp.float32).astype(o_ref.dtype)
    @pl.when(pl.program_id(0) > 100)
    def _():
        o_ref[...] = (a_ref[:, :128] * 2.0).astype(o_ref.dtype)'''))
    assert work.grid == (_M // 128, _N // 128)
    assert work.mxu_flops == GEMM_FLOPS / (_N // 128)  # program_id(1) == 1: one column of steps
    assert work.elementwise_elems == 0         # no step has program_id(0) > 100


def test_a_constant_loop_multiplies_and_dead_work_does_not_count(evaluator):
    work = _measure(evaluator, _gemm_kernel('''
    def step(t, acc):
        return acc + jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    s_ref[...] = jax.lax.fori_loop(0, 3, step, jnp.zeros((128, 128), jnp.float32))
    unused = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    o_ref[...] = (s_ref[...] + 0 * jnp.exp(unused)).astype(o_ref.dtype)'''))
    # The loop's three GEMMs reach the output through scratch; `unused` reaches it through
    # 0 * exp(.), which is live (arithmetic is not folded).
    assert work.mxu_flops == 4 * GEMM_FLOPS
    dead = _measure(evaluator, _gemm_kernel('''
    s_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    o_ref[...] = jnp.zeros_like(o_ref)'''))
    assert dead.mxu_flops == 0 and dead.dead_mxu_flops == GEMM_FLOPS


def test_a_body_that_is_not_a_mosaic_kernel_is_a_clear_error():
    for config, what in (("{}", "no Mosaic body"), ('{"custom_call_config": {"body": "!!"}}',
                                                    "no Mosaic body"),
                         ('{"custom_call_config": {"body": "aGVsbG8="}}', "does not parse")):
        with pytest.raises(ValueError, match=what):
            kernel_work.measure(config, 1)


@pytest.mark.parametrize("workload_id", sorted(k.WORKLOAD_KERNELS))
def test_honest_kernels_cpu_branches_are_their_kernels(evaluator, workload_id):
    module = registry.get(workload_id)
    code = k.WORKLOAD_KERNELS[workload_id]
    full = structure.measure(_export(evaluator, workload_id, code, ["tpu"],
                                     module.CONFIG).mlir_module())
    reduced = structure.measure(_export(evaluator, workload_id, code,
                                        ["tpu", "cpu"]).mlir_module())
    assert reduced.dispatches and structure.cpu_branch_mismatch(reduced) is None
    for d in reduced.dispatches:
        assert d.kernel.mxu_flops == pytest.approx(d.cpu.mxu_flops, rel=0.01)
    assert structure.check(full, True, reduced) is None


def test_a_kernel_whose_body_cannot_be_read_is_refused():
    text = '''
    module @jit_workload {
      func.func public @main(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {
        %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22aGVsbG8=\\22}}"} : (tensor<8x128xf32>) -> tensor<8x128xf32>
        return %0 : tensor<8x128xf32>
      }
    }'''
    measured = structure.measure(text)
    assert measured.kernels == 1 and measured.kernel_errors
    verdict, kind, message = structure.check(measured)
    assert (verdict, kind) == ("runtime_error", "artifact")
    assert "cannot be read" in message and "does not parse" in message
