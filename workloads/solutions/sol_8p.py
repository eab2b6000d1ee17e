"""8p GEMM: C = A @ B (bf16 in, float32 accumulation, bf16 out) as one tiled Pallas matmul.

Grid (M/bm, N/bn, K/bk) with bm 512, bn 1024, bk 1024 (each clamped to a divisor of its dim);
the K axis is innermost and "arbitrary", accumulating into a float32 VMEM scratch. VMEM at full
shape: 2 x (1 + 2 + 1) MiB of blocks + 2 MiB accumulator = 10 MiB.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _tile(dim, target, align):
    """Largest multiple of `align` that divides `dim` and is <= target; `dim` itself if none."""
    t = min(target, dim) // align * align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def workload(A, B):
    M, K = A.shape
    N = B.shape[1]
    bm, bn, bk = _tile(M, 512, 16), _tile(N, 1024, 128), _tile(K, 1024, 128)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), A.dtype),
        grid=(M // bm, N // bn, K // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(A, B)
