"""13p Cross entropy: mean over tokens of logsumexp(hidden @ W) - (hidden @ W)[label].

One Pallas kernel, grid (T/bm, V/bv, H/bk): the logits tile accumulates over H in float32
scratch; on the last H step an online logsumexp (running max and rescaled sum) advances across
the vocabulary tiles and the label's logit is picked by a column-index compare. bm 512, bv up to
1024 (768 at V = 128256 = 167 * 768), bk 1024; VMEM at full shape ~8 MiB. Per-token losses
[T, 1] come out of the kernel; their mean is a tiny XLA reduction.
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


def _kernel(h_ref, w_ref, lab_ref, o_ref, acc_ref, m_ref, s_ref, p_ref):
    v, k = pl.program_id(1), pl.program_id(2)
    nv, nk = pl.num_programs(1), pl.num_programs(2)

    @pl.when((v == 0) & (k == 0))
    def _init_row():
        m_ref[...] = jnp.full_like(m_ref, -jnp.inf)
        s_ref[...] = jnp.zeros_like(s_ref)
        p_ref[...] = jnp.zeros_like(p_ref)

    @pl.when(k == 0)
    def _init_tile():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(h_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == nk - 1)
    def _fold():
        logits = acc_ref[...]                                           # (bm, bv) float32
        bv = logits.shape[1]
        cols = v * bv + jax.lax.broadcasted_iota(jnp.int32, logits.shape, 1)
        p_ref[...] += jnp.sum(jnp.where(cols == lab_ref[...], logits, 0.0), axis=1,
                              keepdims=True)
        m_prev = m_ref[...]
        m_new = jnp.maximum(m_prev, jnp.max(logits, axis=1, keepdims=True))
        s_ref[...] = (s_ref[...] * jnp.exp(m_prev - m_new)
                      + jnp.sum(jnp.exp(logits - m_new), axis=1, keepdims=True))
        m_ref[...] = m_new

        @pl.when(v == nv - 1)
        def _store():
            o_ref[...] = m_ref[...] + jnp.log(s_ref[...]) - p_ref[...]


def workload(hidden, weight, labels):
    T, H = hidden.shape
    V = weight.shape[1]
    bm, bv, bk = _tile(T, 512, 16), _tile(V, 1024, 128), _tile(H, 1024, 128)
    losses = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((T, 1), jnp.float32),
        grid=(T // bm, V // bv, H // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, v, k: (i, k)),
                  pl.BlockSpec((bk, bv), lambda i, v, k: (k, v)),
                  pl.BlockSpec((bm, 1), lambda i, v, k: (i, 0))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, v, k: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bv), jnp.float32)]
                       + [pltpu.VMEM((bm, 1), jnp.float32)] * 3,
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(hidden, weight, labels.reshape(T, 1).astype(jnp.int32))
    return jnp.mean(losses)
