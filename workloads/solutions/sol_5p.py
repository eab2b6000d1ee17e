"""5p causal attention with a relative-position bias: softmax(q k^T / sqrt(D) + bias[h] + causal
mask) v, q/k/v [B,H,S,D], bias [H,S,S] read as (bq, bk) tiles beside each key block.
Grid (B, H, S/bq, S/bk), keys innermost ("arbitrary"), online softmax in VMEM scratch; key blocks
above the diagonal skip their math and their fetch (bias too). bq = bk = 512 (or S): ~4 MiB VMEM.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MASK = -1e30


def _block(dim, target):
    """The largest of target, target/2, ... (down to 128) that divides dim, else dim itself."""
    b = target
    while b >= 128:
        if dim % b == 0:
            return b
        b //= 2
    return dim


def _flash_kernel(q_ref, k_ref, v_ref, bias_ref, o_ref, m_ref, l_ref, acc_ref, *, scale, bq, bk):
    i, j = pl.program_id(2), pl.program_id(3)

    @pl.when(j == 0)
    def _init():
        m_ref[...] = jnp.full_like(m_ref, MASK)
        l_ref[...] = jnp.zeros_like(l_ref)
        acc_ref[...] = jnp.zeros_like(acc_ref)

    # Key block j holds keys j*bk .. j*bk+bk-1; it matters when its first key <= the last query.
    @pl.when(j * bk <= i * bq + bq - 1)
    def _update():
        s = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())),
                                preferred_element_type=jnp.float32) * scale
        s = s + bias_ref[...].astype(jnp.float32)
        q_pos = i * bq + jax.lax.broadcasted_iota(jnp.int32, (bq, bk), 0)
        k_pos = j * bk + jax.lax.broadcasted_iota(jnp.int32, (bq, bk), 1)
        s = jnp.where(k_pos <= q_pos, s, MASK)
        m_prev = m_ref[...]
        m_new = jnp.maximum(m_prev, jnp.max(s, axis=1, keepdims=True))
        p = jnp.exp(s - m_new)
        alpha = jnp.exp(m_prev - m_new)
        l_ref[...] = alpha * l_ref[...] + jnp.sum(p, axis=1, keepdims=True)
        acc_ref[...] = alpha * acc_ref[...] + jnp.dot(p.astype(v_ref.dtype), v_ref[...],
                                                      preferred_element_type=jnp.float32)
        m_ref[...] = m_new

    @pl.when(j == pl.num_programs(3) - 1)
    def _store():
        o_ref[...] = (acc_ref[...] / l_ref[...]).astype(o_ref.dtype)


def workload(q, k, v, rel_pos_bias):
    B, H, S, D = q.shape
    bq = _block(S, 512)
    bk = _block(S, 512)

    def kv_map(b, h, i, j):
        # Blocks above the diagonal are skipped; repeating the last needed block index makes
        # the pipeline skip their copy too.
        return (b, h, jnp.minimum(j, (i * bq + bq - 1) // bk), 0)

    def bias_map(b, h, i, j):
        return (h, i, jnp.minimum(j, (i * bq + bq - 1) // bk))

    kernel = functools.partial(_flash_kernel, scale=D ** -0.5, bq=bq, bk=bk)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((B, H, S, D), q.dtype),
        grid=(B, H, S // bq, S // bk),
        in_specs=[pl.BlockSpec((None, None, bq, D), lambda b, h, i, j: (b, h, i, 0)),
                  pl.BlockSpec((None, None, bk, D), kv_map),
                  pl.BlockSpec((None, None, bk, D), kv_map),
                  pl.BlockSpec((None, bq, bk), bias_map)],
        out_specs=pl.BlockSpec((None, None, bq, D), lambda b, h, i, j: (b, h, i, 0)),
        scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, D), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "parallel", "arbitrary")),
    )(q, k, v, rel_pos_bias)
