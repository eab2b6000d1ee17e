"""3p DeepSeek-V3 MLA: low-rank q/kv projections, RoPE, causal attention, output projection.
All six projections run in one tiled Pallas matmul (grid M/bm x N/bn x K/bk, f32 accumulator,
blocks of 512 or the full dim); a weight slice splits q_up's columns into nope and rope parts.
Attention is a flash kernel over grid (B, H, S/bq, S/bk) scoring q_nope.k_nope + q_rope.k_rope
(k_rope shared by all heads); RoPE and layout moves are XLA glue.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NOPE, ROPE, V_DIM, ROPE_THETA = 128, 64, 128, 10000
MASK = -1e30


def _block(dim, target):
    """The largest of target, target/2, ... (down to 128) that divides dim, else dim itself."""
    b = target
    while b >= 128:
        if dim % b == 0:
            return b
        b //= 2
    return dim


def _matmul_kernel(a_ref, b_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def _matmul(a, b):
    """a [M,K] @ b [K,N] -> [M,N] in a's dtype, accumulated in float32."""
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk = _block(M, 512), _block(N, 512), _block(K, 512)
    return pl.pallas_call(
        _matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), a.dtype),
        grid=(M // bm, N // bn, K // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(a, b)


def _mla_flash_kernel(qn_ref, qr_ref, kn_ref, kr_ref, v_ref, o_ref, m_ref, l_ref, acc_ref, *,
                      scale, bq, bk):
    i, j = pl.program_id(2), pl.program_id(3)
    nt = (((1,), (1,)), ((), ()))

    @pl.when(j == 0)
    def _init():
        m_ref[...] = jnp.full_like(m_ref, MASK)
        l_ref[...] = jnp.zeros_like(l_ref)
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(j * bk <= i * bq + bq - 1)
    def _update():
        # [q_nope, q_rope] . [k_nope, k_rope] as two contractions summed in float32.
        s = jax.lax.dot_general(qn_ref[...], kn_ref[...], nt, preferred_element_type=jnp.float32)
        s = s + jax.lax.dot_general(qr_ref[...], kr_ref[...], nt,
                                    preferred_element_type=jnp.float32)
        s = s * scale
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


def _mla_attention(q_nope, q_rope, k_nope, k_rope, v, num_heads):
    """q_nope/k_nope/v [B,S,H*128], q_rope [B,H,S,64], k_rope [B,S,64] -> [B,S,H*128]."""
    B, S, _ = q_nope.shape
    bq, bk = _block(S, 512), _block(S, 512)

    def last_needed(i, j):
        # Key blocks above the diagonal are skipped; re-pointing at the last needed one makes
        # the pipeline skip their copy.
        return jnp.minimum(j, (i * bq + bq - 1) // bk)

    kernel = functools.partial(_mla_flash_kernel, scale=(NOPE + ROPE) ** -0.5, bq=bq, bk=bk)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((B, S, num_heads * V_DIM), q_nope.dtype),
        grid=(B, num_heads, S // bq, S // bk),
        in_specs=[
            pl.BlockSpec((None, bq, NOPE), lambda b, h, i, j: (b, i, h)),
            pl.BlockSpec((None, None, bq, ROPE), lambda b, h, i, j: (b, h, i, 0)),
            pl.BlockSpec((None, bk, NOPE), lambda b, h, i, j: (b, last_needed(i, j), h)),
            pl.BlockSpec((None, bk, ROPE), lambda b, h, i, j: (b, last_needed(i, j), 0)),
            pl.BlockSpec((None, bk, V_DIM), lambda b, h, i, j: (b, last_needed(i, j), h)),
        ],
        out_specs=pl.BlockSpec((None, bq, V_DIM), lambda b, h, i, j: (b, i, h)),
        scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, 1), jnp.float32),
                        pltpu.VMEM((bq, V_DIM), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "parallel", "arbitrary")),
    )(q_nope, q_rope, k_nope, k_rope, v)


def _rope(x, positions):
    """Half-split rotary embedding on the last dim of x [..., S, R], tables in float32."""
    R = x.shape[-1]
    inv_freq = 1.0 / (ROPE_THETA ** (jnp.arange(0, R, 2, dtype=jnp.float32) / R))
    angles = positions[:, None].astype(jnp.float32) * inv_freq[None, :]          # [S,R/2]
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    x1, x2 = jnp.split(x.astype(jnp.float32), 2, axis=-1)
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).astype(x.dtype)


def workload(x, q_down_proj, q_up_proj, kv_down_proj, k_up_proj, v_up_proj, o_proj):
    B, S, E = x.shape
    kvl = k_up_proj.shape[0]
    H = k_up_proj.shape[1] // NOPE
    ql = q_down_proj.shape[1]
    x2 = x.reshape(B * S, E)

    q_up = q_up_proj.reshape(ql, H, NOPE + ROPE)
    q_up_nope = q_up[:, :, :NOPE].reshape(ql, H * NOPE)
    q_up_rope = q_up[:, :, NOPE:].reshape(ql, H * ROPE)

    cq = _matmul(x2, q_down_proj)                                    # [BS, ql]
    q_nope = _matmul(cq, q_up_nope).reshape(B, S, H * NOPE)
    q_rope = _matmul(cq, q_up_rope).reshape(B, S, H, ROPE).transpose(0, 2, 1, 3)

    kv = _matmul(x2, kv_down_proj)                                   # [BS, kvl + rope]
    latent = kv[:, :kvl]
    k_rope = kv[:, kvl:].reshape(B, S, ROPE)
    k_nope = _matmul(latent, k_up_proj).reshape(B, S, H * NOPE)
    v = _matmul(latent, v_up_proj).reshape(B, S, H * V_DIM)

    positions = jnp.arange(S)
    q_rope = _rope(q_rope, positions)                                # [B,H,S,64]
    k_rope = _rope(k_rope, positions)                                # [B,S,64]

    out = _mla_attention(q_nope, q_rope, k_nope, k_rope, v, H)      # [B,S,H*128]
    return _matmul(out.reshape(B * S, H * V_DIM), o_proj).reshape(B, S, E)
