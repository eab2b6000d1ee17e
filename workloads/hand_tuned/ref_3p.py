"""3p MLA attention, hand-tuned reference: the MLA projections in XLA around JAX's TPU flash
attention kernel (`jax.experimental.pallas.ops.tpu.flash_attention`) with the 192-wide q/k heads
zero-padded to 256, as JAXBench `3p_MLA_Attention/optimized.py` wires it.

Interface: `workload(x, q_down_proj, q_up_proj, kv_down_proj, k_up_proj, v_up_proj, o_proj)`
exactly like the baseline -> [B,S,E] bf16. The six projections and the RoPE are the baseline's
(XLA, bf16 matmuls; RoPE tables in float32); only the attention core is Pallas.

Adapters and their costs (at full shape B=4 S=2048 H=128):
  * Head-dim padding: the kernel wants one head_dim for q, k and v, a multiple of 128. q and k
    (128 nope + 64 rope = 192) are zero-padded to 256 and v (128) to 256. Zeros leave q.k and the
    kept output columns exact, but the kernel does 256/192 = 1.33x the QK^T work and 2x the PV
    work, and the padded q, k, v are written and read once more (3 x 512 MiB at 256 wide, vs
    2 x 384 + 256 MiB unpadded).
  * Layout: the baseline builds q/k/v as [B,S,H,D]; flash attention takes [B,H,S,D], so q, k, v
    are transposed in (fused by XLA with the pad) and the output transposed back and sliced to
    the 128 v columns before o_proj: one extra read + write of each tensor per call.
  * Scale: sm_scale = 1/sqrt(192), the unpadded head dim (the pad must not change it).

Tuned blocks (JAXBench `TUNED_PARAMS`, tuned for head_dim 128 and reused at 256): block_q 2048,
block_k_major 2048, block_k 1024, block_b 1; each clamped to S so the module runs at the reduced
CPU shapes (S=1024: all 1024).
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import flash_attention as upstream

NOPE, ROPE, V_DIM, ROPE_THETA = 128, 64, 128, 10000
PAD_HEAD_DIM = 256
TUNED = {
    "block_q": 2048, "block_k_major": 2048, "block_k": 1024, "block_b": 1,
    "block_q_major_dkv": 128, "block_k_major_dkv": 128, "block_k_dkv": 128, "block_q_dkv": 128,
    "block_k_major_dq": 128, "block_k_dq": 128, "block_q_dq": 128,
}


def _fit(block, dim):
    """The tuned block if it divides `dim`, else the largest divisor of `dim` it allows."""
    block = min(block, dim)
    return block if dim % block == 0 else math.gcd(block, dim)


def _block_sizes(batch, seq_len):
    sizes = {name: _fit(value, batch if name == "block_b" else seq_len)
             for name, value in TUNED.items()}
    return upstream.BlockSizes(**sizes)


def _rope(x, positions):
    """Half-split rotary embedding on the last dim of x [B,S,H,R], tables in float32."""
    R = x.shape[-1]
    inv_freq = 1.0 / (ROPE_THETA ** (jnp.arange(0, R, 2, dtype=jnp.float32) / R))
    angles = positions[:, None].astype(jnp.float32) * inv_freq[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = jnp.split(x.astype(jnp.float32), 2, axis=-1)
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).astype(x.dtype)


def _to_kernel_layout(t):
    """[B,S,H,d] -> [B,H,S,PAD_HEAD_DIM], zero-padded on the head dim."""
    t = jnp.pad(t, ((0, 0), (0, 0), (0, 0), (0, PAD_HEAD_DIM - t.shape[-1])))
    return t.transpose(0, 2, 1, 3)


def workload(x, q_down_proj, q_up_proj, kv_down_proj, k_up_proj, v_up_proj, o_proj):
    B, S, _ = x.shape
    kvl = k_up_proj.shape[0]
    H = k_up_proj.shape[1] // NOPE

    q = jnp.dot(jnp.dot(x, q_down_proj), q_up_proj).reshape(B, S, H, NOPE + ROPE)
    kv = jnp.dot(x, kv_down_proj)
    latent, k_rope = kv[..., :kvl], kv[..., kvl:]
    k_nope = jnp.dot(latent, k_up_proj).reshape(B, S, H, NOPE)
    v = jnp.dot(latent, v_up_proj).reshape(B, S, H, V_DIM)

    positions = jnp.arange(S)
    q_rope = _rope(q[..., NOPE:], positions)
    k_rope = _rope(jnp.broadcast_to(k_rope[:, :, None, :], (B, S, H, ROPE)), positions)
    q_full = jnp.concatenate([q[..., :NOPE], q_rope], axis=-1)        # [B,S,H,192]
    k_full = jnp.concatenate([k_nope, k_rope], axis=-1)

    out = upstream.flash_attention(
        _to_kernel_layout(q_full), _to_kernel_layout(k_full), _to_kernel_layout(v),
        causal=True, sm_scale=(NOPE + ROPE) ** -0.5, block_sizes=_block_sizes(B, S))
    out = out[..., :V_DIM].transpose(0, 2, 1, 3).reshape(B, S, H * V_DIM)
    return jnp.dot(out, o_proj)
