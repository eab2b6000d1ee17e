"""40k: min_n(groupnorm(x @ weight.T + linear_bias)) + bias -> [1, N, M, 1], two Pallas kernels.

Kernel 1: grid (M/bm, N/bn, K/bk), dot_general on (bn, bk) weight tiles into an f32 accumulator;
the last K step normalises each 128-lane slice (groups of 16: stats as block-diagonal MXU averages
on a hi/lo bf16 split), applies the affine and folds the row min into (bm, 1) scratch across the
"arbitrary" N axis. Kernel 2 writes out[n, m] = row_min[m] + bias[n] in (bn, bm) tiles.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_GROUPS = 512
GN_EPS = 1e-5
LANES = 128


def _tile(dim, pref):
    """Largest power-of-two tile <= pref (and >= 128) dividing dim, else the whole dim."""
    t = pref
    while t >= 128:
        if dim % t == 0:
            return t
        t //= 2
    return dim


def _group_mean(v, avg):
    """Per-lane mean of v over its group, exact to ~2^-16: (hi + lo) @ avg, both parts bf16."""
    hi = v.astype(jnp.bfloat16)
    lo = (v - hi.astype(jnp.float32)).astype(jnp.bfloat16)
    return (jnp.dot(hi, avg, preferred_element_type=jnp.float32)
            + jnp.dot(lo, avg, preferred_element_type=jnp.float32))


def _gemm_groupnorm_min_kernel(x_ref, w_ref, b_ref, g_ref, beta_ref, avg_ref, o_ref,
                               acc_ref, min_ref):
    j, k = pl.program_id(1), pl.program_id(2)
    last_k = k == pl.num_programs(2) - 1

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jax.lax.dot_general(x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
                                        preferred_element_type=jnp.float32)

    @pl.when(last_k)
    def _reduce_tile():
        avg = avg_ref[...]
        tile_min = None
        for s in range(acc_ref.shape[1] // LANES):      # static: groups never straddle a slice
            cols = slice(s * LANES, (s + 1) * LANES)
            y = acc_ref[:, cols] + b_ref[:, cols].astype(jnp.float32)
            d = y - _group_mean(y, avg)
            y = d * jax.lax.rsqrt(_group_mean(d * d, avg) + GN_EPS)
            y = y * g_ref[:, cols].astype(jnp.float32) + beta_ref[:, cols].astype(jnp.float32)
            part = jnp.min(y, axis=1, keepdims=True)
            tile_min = part if tile_min is None else jnp.minimum(tile_min, part)

        @pl.when(j == 0)
        def _first():
            min_ref[...] = tile_min

        @pl.when(j > 0)
        def _rest():
            min_ref[...] = jnp.minimum(min_ref[...], tile_min)

    @pl.when(last_k & (j == pl.num_programs(1) - 1))
    def _store():
        o_ref[...] = min_ref[...]


def _broadcast_add_kernel(min_ref, bias_ref, o_ref):
    o_ref[...] = (min_ref[...] + bias_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


def workload(x, weight, linear_bias, gn_weight, gn_bias, bias):
    m, k = x.shape
    n = weight.shape[0]
    group = n // NUM_GROUPS
    if LANES % group or n % LANES:
        raise ValueError(f"40k: group size {group} must divide {LANES} and N={n} be a multiple")
    bm, bn, bk = _tile(m, 512), _tile(n, 1024), _tile(k, 1024)
    lane = jnp.arange(LANES)
    avg = ((lane[:, None] // group == lane[None, :] // group) / group).astype(jnp.bfloat16)
    vec = pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))
    row_min = pl.pallas_call(
        _gemm_groupnorm_min_kernel,
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bn, bk), lambda i, j, kk: (j, kk)),
                  vec, vec, vec,
                  pl.BlockSpec((LANES, LANES), lambda i, j, kk: (0, 0))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32), pltpu.VMEM((bm, 1), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(x, weight, linear_bias.reshape(1, n), gn_weight.reshape(1, n), gn_bias.reshape(1, n), avg)

    # [M, 1] and [1, M] share one row-major layout: the reshape is free and puts M on lanes.
    bn2, bm2 = _tile(n, 512), _tile(m, 2048)
    out = pl.pallas_call(
        _broadcast_add_kernel,
        out_shape=jax.ShapeDtypeStruct((n, m), x.dtype),
        grid=(n // bn2, m // bm2),
        in_specs=[pl.BlockSpec((1, bm2), lambda i, j: (0, j)),
                  pl.BlockSpec((bn2, 1), lambda i, j: (i, 0))],
        out_specs=pl.BlockSpec((bn2, bm2), lambda i, j: (i, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(row_min.reshape(1, m), bias.reshape(n, 1))
    return out.reshape(1, n, m, 1)
