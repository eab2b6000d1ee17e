"""1p Flash attention, hand-tuned reference: JAX's TPU flash attention kernel
(`jax.experimental.pallas.ops.tpu.flash_attention.flash_attention`), as JAXBench
`1p_Flash_Attention/optimized.py` wires it (causal, sm_scale = 1/sqrt(D)).

Interface: `workload(query, key, value)`, each [B,H,S,D] bf16, exactly the baseline's layout, so
no adapter and no extra HBM traffic. Tuned forward blocks (JAXBench `TUNED_PARAMS`, v6e):
block_q 2048, block_k_major 2048, block_k 1024, block_b 1 (grid (B, H, S/2048, S/2048) =
(4, 64, 2, 2) at full shape; the causal kernel skips the kv block above the diagonal). The
backward blocks (128 each) are passed along for completeness; only the forward runs here.
Every block is clamped to S so the module runs at the reduced CPU shapes too (S=1024: all blocks
1024, grid (1, 2, 1, 1)).

The kernel computes scores and softmax in float32 (the baseline does too). The upstream wrapper
calls `pl.pallas_call` at call time without an `interpret` argument, so the judge's patch and
`pltpu.force_tpu_interpret_mode` reach it. The flash_attention entry point is a `custom_vjp`;
the pallas_call sits inside its forward jaxpr.
"""
import math

from jax.experimental.pallas.ops.tpu import flash_attention as upstream

TUNED = {
    "block_q": 2048, "block_k_major": 2048, "block_k": 1024, "block_b": 1,
    "block_q_major_dkv": 128, "block_k_major_dkv": 128, "block_k_dkv": 128, "block_q_dkv": 128,
    "block_k_major_dq": 128, "block_k_dq": 128, "block_q_dq": 128,
}


def _fit(block, dim):
    """The tuned block if it divides `dim`, else the largest divisor of `dim` it allows."""
    block = min(block, dim)
    return block if dim % block == 0 else math.gcd(block, dim)


def block_sizes(batch, seq_len):
    sizes = {name: _fit(value, batch if name == "block_b" else seq_len)
             for name, value in TUNED.items()}
    return upstream.BlockSizes(**sizes)


def workload(query, key, value):
    B, _, S, D = query.shape
    return upstream.flash_attention(
        query, key, value, causal=True, sm_scale=D ** -0.5, block_sizes=block_sizes(B, S))
