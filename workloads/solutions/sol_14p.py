"""14p Ragged dot with equal groups: out[g] = x[g] @ weights[g], float32 accumulation.

One batched, K-tiled Pallas matmul: grid (G, Mg/bm, N/bn, K/bk) with the group axis squeezed
out of every block; bm 512, bn 1024, bk 1024 (clamped to divisors), K innermost and
"arbitrary" into a float32 VMEM accumulator. VMEM at full shape ~10 MiB.
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


def _kernel(x_ref, w_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(3) == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(3) == pl.num_programs(3) - 1)
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def workload(x, weights):
    G, Mg, K = x.shape
    N = weights.shape[2]
    bm, bn, bk = _tile(Mg, 512, 16), _tile(N, 1024, 128), _tile(K, 1024, 128)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((G, Mg, N), x.dtype),
        grid=(G, Mg // bm, N // bn, K // bk),
        in_specs=[pl.BlockSpec((None, bm, bk), lambda g, i, j, k: (g, i, k)),
                  pl.BlockSpec((None, bk, bn), lambda g, i, j, k: (g, k, j))],
        out_specs=pl.BlockSpec((None, bm, bn), lambda g, i, j, k: (g, i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "parallel", "arbitrary")),
    )(x, weights)
