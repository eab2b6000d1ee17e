"""2p GQA attention, hand-tuned reference: JAX's splash attention kernel
(`jax.experimental.pallas.ops.tpu.splash_attention`) with a causal mask, as JAXBench
`2p_GQA_Attention/optimized.py` wires it (tuned block sizes, HEAD_DIM_MINOR layouts, one shard).

Interface: `workload(query, key, value)` exactly like the baseline: query [B,S,Hq,D], key/value
[B,S,Hkv,D] bf16 -> [B,S,Hq,D] bf16.

Adapters and their costs (all outside the kernel, at full shape B=4 S=4096 Hq=128 Hkv=8 D=128):
  * Layout: splash takes [H,S,D] per example, the baseline is [B,S,H,D]. q, k and v are
    transposed to [B,H,S,D] and the output back to [B,S,H,D]: four XLA transposes per call,
    each a full read + write of the tensor (q and out 512 MiB each, k and v 32 MiB each, so
    about 2.1 GiB of extra HBM traffic, ~1.3 ms at v6e's ~1.6 TB/s; JAXBench pays the same).
  * Softmax scale: splash has no scale argument, so q is multiplied by 1/sqrt(D) first (bf16,
    fused by XLA into the q transpose; it adds one bf16 rounding of q*scale).
  * Batch: splash has no batch dim. After the transpose, [B,H,S,D] is reshaped to [B*H,S,D]
    (free) with one causal mask per folded head; query head b*Hq+h reads KV head
    (b*Hq+h) // (Hq/Hkv) = b*Hkv + h // (Hq/Hkv), so the GQA map stays right. JAXBench vmaps
    instead, which is equivalent on TPU but fails for B > 1 in JAX 0.10.2's TPU interpret mode
    (a vmapped pallas_call's extra grid dim has no dimension_semantics entry; see ref_4p).
  * GQA: JAXBench `jnp.repeat`s each KV head Hq/Hkv=16 times before calling an MHA kernel
    (16x the K/V bytes written and read again: ~2 GiB more HBM traffic per call). The installed
    splash kernel supports grouped heads natively (its index maps send query head h to KV head
    h // (Hq/Hkv)), so this reference passes the Hkv heads as they are. Set `REPEAT_KV = True`
    to reproduce JAXBench's wiring exactly (its timing is the JSON's reference_ms_v6e).

Tuned blocks (JAXBench `TUNED_PARAMS`, v6e): block_q 2048, block_kv 2048, block_kv_compute 1024,
forward only (the backward blocks are None upstream too). Each is clamped to S so the module runs
at the reduced CPU shapes (S=1024: all 1024). The splash kernel takes an `interpret` argument; it is
left at its default (False): the judge's forced TPU interpret mode overrides it inside
pallas_call, so nothing here needs to know where it runs.
"""
import math

import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import splash_attention as splash

BLOCK_Q, BLOCK_KV, BLOCK_KV_COMPUTE = 2048, 2048, 1024
REPEAT_KV = False


def _fit(block, dim):
    """The tuned block if it divides `dim`, else the largest divisor of `dim` it allows."""
    block = min(block, dim)
    return block if dim % block == 0 else math.gcd(block, dim)


def causal_splash_kernel(num_heads, seq_len):
    """A single-device causal splash MHA/GQA kernel over [H,S,D] inputs (no batch dim)."""
    block_kv = _fit(BLOCK_KV, seq_len)
    sizes = splash.BlockSizes(
        block_q=_fit(BLOCK_Q, seq_len),
        block_kv=block_kv,
        block_kv_compute=_fit(BLOCK_KV_COMPUTE, block_kv),
        q_layout=splash.QKVLayout.HEAD_DIM_MINOR,
        k_layout=splash.QKVLayout.HEAD_DIM_MINOR,
        v_layout=splash.QKVLayout.HEAD_DIM_MINOR,
    )
    mask = splash.MultiHeadMask([splash.CausalMask(shape=(seq_len, seq_len))] * num_heads)
    return splash.make_splash_mha_single_device(mask, block_sizes=sizes)


def workload(query, key, value):
    _, S, Hq, D = query.shape
    group = Hq // key.shape[2]
    q = (query * (D ** -0.5)).astype(query.dtype).transpose(0, 2, 1, 3)   # [B,Hq,S,D]
    k = key.transpose(0, 2, 1, 3)                                         # [B,Hkv,S,D]
    v = value.transpose(0, 2, 1, 3)
    if REPEAT_KV:
        k = jnp.repeat(k, group, axis=1)
        v = jnp.repeat(v, group, axis=1)
    B, Hkv = q.shape[0], k.shape[1]
    kernel = causal_splash_kernel(B * Hq, S)
    out = kernel(q.reshape(B * Hq, S, D), k.reshape(B * Hkv, S, D), v.reshape(B * Hkv, S, D))
    return out.reshape(B, Hq, S, D).transpose(0, 2, 1, 3)
