"""1p Flash attention (baseline): causal multi-head softmax attention, no GQA, no softcap.

From JAXBench `benchmark/1p_Flash_Attention/baseline.py` ("Baseline-MHA"); the hand-tuned
reference is `jax.experimental.pallas.ops.tpu.flash_attention`. q, k, v are [B,H,S,D]; the scale
is 1/sqrt(D); query i attends to keys 0..i. Unlike JAXBench, which runs the softmax in bf16, the
scores and softmax here are float32 (what flash-attention kernels and MaxText do), so the
reference is the more accurate side of the comparison. Tolerance from MaxKernel
`jaxbench_adapted_dataset/1p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "1p"
NAME = "Flash_Attention"

CONFIG = {
    "name": "flash_attention_baseline",
    "model": "Baseline-MHA",
    "operator": "causal_mha",
    "batch": 4,
    "seq_len": 4096,
    "num_heads": 64,
    "head_dim": 128,
}

# q, k, v [1,2,1024,128].
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "num_heads": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_heads": ("a head axis: attention kernels step through it one head at a time (block "
                  "1), so its power of two never meets a block shape; all 64 would make "
                  "every interpret-mode run 32x longer."),
}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 22.9762

# QK^T and PV, each 2*B*H*S*S*D, counted dense because the baseline computes the masked half
# too. XLA's cost_analysis (the JSON's figure) adds ~11 elementwise ops per score: +2.1%.
FLOPS = 4 * CONFIG["batch"] * CONFIG["num_heads"] * CONFIG["seq_len"] ** 2 * CONFIG["head_dim"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (query, key, value), each [B,H,S,D] ~ normal."""
    key_q, key_k, key_v = jax.random.split(jax.random.key(seed), 3)
    shape = (config["batch"], config["num_heads"], config["seq_len"], config["head_dim"])
    query = jax.random.normal(key_q, shape, dtype=dtype)
    key = jax.random.normal(key_k, shape, dtype=dtype)
    value = jax.random.normal(key_v, shape, dtype=dtype)
    return query, key, value


def workload(query, key, value):
    """softmax(q k^T / sqrt(D) + causal mask) v, scores and softmax in float32."""
    S, D = query.shape[-2], query.shape[-1]
    scores = jnp.einsum("bhqd,bhkd->bhqk", query, key, preferred_element_type=jnp.float32)
    scores = scores * (D ** -0.5)
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    scores = jnp.where(causal, scores, -1e30)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", probs.astype(value.dtype), value,
                     preferred_element_type=jnp.float32)
    return out.astype(query.dtype)
