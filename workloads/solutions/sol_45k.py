"""45k: swish(swish(groupnorm(x @ gemm_weight.T + gemm_bias)) * multiply_weight), one Pallas kernel.

Grid (M/bm, N/bn, K/bk), x @ weight.T as dot_general on (bn, bk) weight tiles, f32 accumulator.
The last K step normalises each 128-lane slice (4 whole groups of 32): group means and variances
are slice @ B on the MXU (B block-diagonal, 1/32 within a group), the operand split into bf16
high + low parts for ~f32 accuracy; then the affine, swishes and multiply. ~11 MiB VMEM at full.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_GROUPS = 256
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


def _swish(v):
    return v * jax.nn.sigmoid(v)


def _kernel(x_ref, w_ref, b_ref, g_ref, beta_ref, mw_ref, avg_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jax.lax.dot_general(x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
                                        preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _store():
        avg = avg_ref[...]
        for s in range(acc_ref.shape[1] // LANES):      # static: groups never straddle a slice
            cols = slice(s * LANES, (s + 1) * LANES)
            y = acc_ref[:, cols] + b_ref[:, cols].astype(jnp.float32)
            d = y - _group_mean(y, avg)
            var = _group_mean(d * d, avg)
            y = d * jax.lax.rsqrt(var + GN_EPS)
            y = y * g_ref[:, cols].astype(jnp.float32) + beta_ref[:, cols].astype(jnp.float32)
            y = _swish(y) * mw_ref[:, cols].astype(jnp.float32)
            o_ref[:, cols] = _swish(y).astype(o_ref.dtype)


def workload(x, gemm_weight, gemm_bias, gn_weight, gn_bias, multiply_weight):
    m, k = x.shape
    n = gemm_weight.shape[0]
    group = n // NUM_GROUPS
    if LANES % group or n % LANES:
        raise ValueError(f"45k: group size {group} must divide {LANES} and N={n} be a multiple")
    bm, bn, bk = _tile(m, 512), _tile(n, 1024), _tile(k, 1024)
    lane = jnp.arange(LANES)
    avg = ((lane[:, None] // group == lane[None, :] // group) / group).astype(jnp.bfloat16)
    vec = pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bn, bk), lambda i, j, kk: (j, kk)),
                  vec, vec, vec, vec,
                  pl.BlockSpec((LANES, LANES), lambda i, j, kk: (0, 0))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, gemm_weight, gemm_bias.reshape(1, n), gn_weight.reshape(1, n), gn_bias.reshape(1, n),
      multiply_weight.reshape(1, n), avg)
