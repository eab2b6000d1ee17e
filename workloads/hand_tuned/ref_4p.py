"""4p Sparse (splash) attention, hand-tuned reference: JAX's splash attention kernel
(`jax.experimental.pallas.ops.tpu.splash_attention`) with a causal mask, as JAXBench
`4p_Sparse_Attention/optimized.py` wires it (tuned block sizes, HEAD_DIM_MINOR layouts, one
shard). JAXBench vmaps the per-example kernel over the batch; this reference folds the batch into
the head axis instead (see below).

Interface: `workload(q, k, v)` exactly like the baseline: q [B,Hq,S,D] (pre-scaled by 1/sqrt(D)
in the inputs, so no softmax scale here), k/v [B,Hkv,S,D] bf16 -> [B,Hq,S,D] bf16. The layout is
already splash's [H,S,D] per example: no transposes.

Adapters and their costs (full shape B=4 S=4096 Hq=64 Hkv=8 D=128):
  * Batch: splash has no batch dim. [B,H,S,D] is reshaped to [B*H,S,D] (free: a bitcast, no HBM
    traffic) with one causal mask per folded head; the GQA map stays right because query head
    b*Hq+h reads KV head (b*Hq+h) // (Hq/Hkv) = b*Hkv + h // (Hq/Hkv). JAXBench's `jax.vmap`
    is equivalent on TPU (one more grid axis), but in JAX 0.10.2's TPU interpret mode a vmapped
    pallas_call with dimension_semantics fails for B > 1 (the batching rule adds a grid dim
    without a semantics entry: "safe_zip() argument 1 has length 3 but argument 0 has length 4"
    in interpret_pallas_call._get_randomized_grid_coordinates), so folding is what runs both
    on TPU and in the judge.
  * GQA: JAXBench `jnp.repeat`s each KV head Hq/Hkv=8 times before calling an MHA kernel (8x the
    K/V bytes: ~0.9 GiB of extra HBM writes and reads per call). The installed splash kernel
    supports grouped heads natively (query head h reads KV head h // (Hq/Hkv)), so this
    reference passes the Hkv heads as they are; `REPEAT_KV = True` reproduces JAXBench exactly.

Tuned blocks (JAXBench `TUNED_PARAMS`, v6e): block_q 2048, block_kv 2048, block_kv_compute 1024,
forward only; each clamped to S (CPU S=1024: all 1024). splash's `interpret` argument is left at its
default; the judge's forced TPU interpret mode overrides it inside pallas_call.
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


def workload(q, k, v):
    B, Hq, S, D = q.shape
    if REPEAT_KV:
        group = Hq // k.shape[1]
        k = jnp.repeat(k, group, axis=1)
        v = jnp.repeat(v, group, axis=1)
    Hkv = k.shape[1]
    kernel = causal_splash_kernel(B * Hq, S)
    out = kernel(q.reshape(B * Hq, S, D), k.reshape(B * Hkv, S, D), v.reshape(B * Hkv, S, D))
    return out.reshape(B, Hq, S, D)
