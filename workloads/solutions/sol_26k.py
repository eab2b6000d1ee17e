"""26k BMM_InstanceNorm_Sum_ResidualAdd_Multiply: h = x @ W.T + b; InstanceNorm over h's 1x1
window; out = (h_norm + y) * y. K-tiled NT matmul, grid (M/bm, N/bn, K/bk), the whole epilogue
fused into the last K step, written as the workload states it. Degenerate: h - mean(h) is
exactly 0, so out = (in_bias + y) * y for any x and W; the kernel still computes it. Tiles 512.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

EPS = 1e-5


def _tile(dim, pref):
    """Largest of pref, pref/2, ... that divides dim; the whole dim if none does."""
    t = pref
    while t >= 128:
        if dim % t == 0:
            return t
        t //= 2
    return dim


def _kernel(x_ref, w_ref, b_ref, y_ref, iw_ref, ib_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jax.lax.dot_general(x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
                                        preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _store():
        h = acc_ref[...] + b_ref[...].astype(jnp.float32)
        # InstanceNorm over a 1x1 window: the mean is the element, the biased variance 0.
        mean = h
        var = (h - mean) * (h - mean)
        h = (h - mean) * jax.lax.rsqrt(var + EPS)
        h = h * iw_ref[...].astype(jnp.float32) + ib_ref[...].astype(jnp.float32)
        y = y_ref[...].astype(jnp.float32)
        o_ref[...] = ((h + y) * y).astype(o_ref.dtype)


def workload(x, y, bmm_weight, bmm_bias, in_weight, in_bias):
    m, k = x.shape
    n = bmm_weight.shape[0]
    bm, bn, bk = _tile(m, 512), _tile(n, 512), _tile(k, 512)
    row = pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), y.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bn, bk), lambda i, j, kk: (j, kk)),
                  row,
                  pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
                  row, row],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, bmm_weight, bmm_bias.reshape(1, n), y, in_weight.reshape(1, n), in_bias.reshape(1, n))
