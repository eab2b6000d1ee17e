"""5p Flex attention: Llama-3.1-70B causal multi-head attention with a learned score bias.

From JAXBench `benchmark/5p_Flex_Attention/baseline.py` (MaxText `layers/attention_op.py`; the
JAX analogue of PyTorch flex_attention with a score_mod). q, k, v are [B,H,S,D]; the score
modification adds rel_pos_bias[h, i, j] (one [S,S] table per head, shared across the batch)
after the 1/sqrt(D) scaling; query i attends to keys 0..i. Scores and softmax are float32
(JAXBench: bf16). Tolerance from MaxKernel `jaxbench_adapted_dataset/5p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "5p"
NAME = "Flex_Attention"

CONFIG = {
    "name": "llama3_70b_flex_attention",
    "model": "Llama-3.1-70B",
    "operator": "flex_attention",
    "batch": 4,
    "seq_len": 4096,
    "num_heads": 64,
    "head_dim": 128,
}

# q, k, v [1,2,1024,128], rel_pos_bias [2,1024,1024].
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "num_heads": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_heads": ("a head axis: attention kernels step through it one head at a time (block "
                  "1), so its power of two never meets a block shape; all 64 would make "
                  "every interpret-mode run 32x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 37.1101

# QK^T and PV (2*B*H*S*S*D each, dense) plus the bias add (B*H*S*S), as JAXBench counts; XLA's
# cost_analysis (the JSON's figure) adds the softmax's elementwise ops: +2.5%.
_B, _S, _H, _D = CONFIG["batch"], CONFIG["seq_len"], CONFIG["num_heads"], CONFIG["head_dim"]
FLOPS = 4 * _B * _H * _S * _S * _D + _B * _H * _S * _S


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (q ~ normal, k, v ~ normal*0.02, each [B,H,S,D]; rel_pos_bias [H,S,S] ~
    normal*0.01)."""
    key_q, key_k, key_v, key_b = jax.random.split(jax.random.key(seed), 4)
    B, S, H, D = config["batch"], config["seq_len"], config["num_heads"], config["head_dim"]
    q = jax.random.normal(key_q, (B, H, S, D), dtype=dtype)
    k = jax.random.normal(key_k, (B, H, S, D), dtype=dtype) * 0.02
    v = jax.random.normal(key_v, (B, H, S, D), dtype=dtype) * 0.02
    rel_pos_bias = jax.random.normal(key_b, (H, S, S), dtype=dtype) * 0.01
    return q, k, v, rel_pos_bias


def workload(q, k, v, rel_pos_bias):
    """softmax(q k^T / sqrt(D) + bias + causal mask) v, scores and softmax in float32."""
    S, D = q.shape[-2], q.shape[-1]
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k, preferred_element_type=jnp.float32)
    scores = scores * (D ** -0.5) + rel_pos_bias.astype(jnp.float32)[None]
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    scores = jnp.where(causal, scores, -1e30)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", probs.astype(v.dtype), v,
                     preferred_element_type=jnp.float32)
    return out.astype(q.dtype)                  # [B,H,S,D]
