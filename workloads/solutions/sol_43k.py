"""43k: softmax(scale * batchnorm_eval(x @ weight + bias), axis=1) in two Pallas kernels.

Kernel 1: grid (M/bm, N/bn, K/bk), f32 VMEM accumulator; the last K step writes the f32 logits
(bias, running-stat BatchNorm, scale) and updates an online row max / sum-of-exp kept in (bm, 1)
output blocks across the "arbitrary" N axis. Kernel 2: exp(z - max) / sum per tile.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _tile(dim, pref):
    """Largest power-of-two tile <= pref (and >= 128) dividing dim, else the whole dim."""
    t = pref
    while t >= 128:
        if dim % t == 0:
            return t
        t //= 2
    return dim

BN_EPS = 1e-05


def _logits_kernel(x_ref, w_ref, b_ref, sc_ref, bb_ref, mu_ref, var_ref, s_ref,
                   z_ref, m_ref, l_ref, acc_ref):
    j, k = pl.program_id(1), pl.program_id(2)

    @pl.when(k == 0)
    def _init_acc():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _epilogue():
        y = acc_ref[...] + b_ref[...].astype(jnp.float32)
        inv_std = 1.0 / jnp.sqrt(var_ref[...].astype(jnp.float32) + BN_EPS)
        y = (y - mu_ref[...].astype(jnp.float32)) * inv_std
        y = sc_ref[...].astype(jnp.float32) * y + bb_ref[...].astype(jnp.float32)
        z = s_ref[...].astype(jnp.float32) * y
        z_ref[...] = z
        tile_max = jnp.max(z, axis=1, keepdims=True)

        @pl.when(j == 0)
        def _first():
            m_ref[...] = tile_max
            l_ref[...] = jnp.sum(jnp.exp(z - tile_max), axis=1, keepdims=True)

        @pl.when(j > 0)
        def _rest():
            m_old = m_ref[...]
            m_new = jnp.maximum(m_old, tile_max)
            l_ref[...] = (l_ref[...] * jnp.exp(m_old - m_new)
                          + jnp.sum(jnp.exp(z - m_new), axis=1, keepdims=True))
            m_ref[...] = m_new


def _normalise_kernel(z_ref, m_ref, l_ref, o_ref):
    e = jnp.exp(z_ref[...] - m_ref[...])
    o_ref[...] = (e / l_ref[...]).astype(o_ref.dtype)


def workload(x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale):
    m, k = x.shape
    n = weight.shape[1]
    bm, bn, bk = _tile(m, 512), _tile(n, 1024), _tile(k, 1024)
    z, row_max, row_sum = pl.pallas_call(
        _logits_kernel,
        out_shape=(jax.ShapeDtypeStruct((m, n), jnp.float32),
                   jax.ShapeDtypeStruct((m, 1), jnp.float32),
                   jax.ShapeDtypeStruct((m, 1), jnp.float32)),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
                  pl.BlockSpec((1, 1), lambda i, j, kk: (0, 0))],
        out_specs=(pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
                   pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)),
                   pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0))),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(x, weight, bias.reshape(1, n), bn_scale.reshape(1, n), bn_bias.reshape(1, n),
      bn_mean.reshape(1, n), bn_var.reshape(1, n), scale.reshape(1, 1))
    return pl.pallas_call(
        _normalise_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
                  pl.BlockSpec((bm, 1), lambda i, j: (i, 0)),
                  pl.BlockSpec((bm, 1), lambda i, j: (i, 0))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(z, row_max, row_sum)
