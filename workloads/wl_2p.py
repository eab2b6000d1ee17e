"""2p GQA attention: Llama-3.1-405B causal grouped-query attention (128 query heads, 8 KV heads).

From JAXBench `benchmark/2p_GQA_Attention/baseline.py` ("Extracted from MaxText"); the hand-tuned
reference is JAX Pallas splash attention. Layout is [B,S,H,D] (sequence before heads). Each KV
head serves Hq/Hkv consecutive query heads (query head h reads KV head h // (Hq/Hkv)); the scale
is 1/sqrt(D); query i attends to keys 0..i. Unlike JAXBench, which runs the softmax in bf16, the
scores and softmax here are float32, so the reference is the more accurate side of the
comparison. Tolerance from MaxKernel `jaxbench_adapted_dataset/2p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "2p"
NAME = "GQA_Attention"

CONFIG = {
    "name": "llama3_405b_gqa",
    "model": "Llama-3.1-405B",
    "operator": "gqa_attention",
    "batch": 4,
    "seq_len": 4096,
    "num_query_heads": 128,
    "num_kv_heads": 8,
    "head_dim": 128,
    "emb_dim": 16384,
}

# query [1,1024,16,128], key/value [1,1024,8,128] (2 query heads per KV head).
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "num_query_heads": 16, "num_kv_heads": 8,
              "emb_dim": 2048}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_query_heads": ("a head axis: attention kernels step through it one head at a time "
                        "(block 1), so its power of two never meets a block shape; all 128 "
                        "would make every interpret-mode run 8x longer."),
}

ATOL = 0.05
RTOL = 0.05
BASELINE_MS_V6E = 50.3364

# QK^T and PV, each 2*B*Hq*S*S*D, counted dense because the baseline computes the masked half
# too. XLA's cost_analysis (the JSON's figure) adds the elementwise softmax ops: +1.2%.
FLOPS = (4 * CONFIG["batch"] * CONFIG["num_query_heads"] * CONFIG["seq_len"] ** 2
         * CONFIG["head_dim"])


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (query [B,S,Hq,D], key [B,S,Hkv,D], value [B,S,Hkv,D]), each ~ normal."""
    key_q, key_k, key_v = jax.random.split(jax.random.key(seed), 3)
    B, S, D = config["batch"], config["seq_len"], config["head_dim"]
    Hq, Hkv = config["num_query_heads"], config["num_kv_heads"]
    query = jax.random.normal(key_q, (B, S, Hq, D), dtype=dtype)
    key = jax.random.normal(key_k, (B, S, Hkv, D), dtype=dtype)
    value = jax.random.normal(key_v, (B, S, Hkv, D), dtype=dtype)
    return query, key, value


def workload(query, key, value):
    """Causal GQA: repeat each KV head Hq/Hkv times, softmax(q k^T / sqrt(D)) v in float32."""
    B, S, Hq, D = query.shape
    group = Hq // key.shape[2]
    key = jnp.repeat(key, group, axis=2)        # [B,S,Hq,D]
    value = jnp.repeat(value, group, axis=2)
    scores = jnp.einsum("bqhd,bkhd->bhqk", query, key, preferred_element_type=jnp.float32)
    scores = scores * (D ** -0.5)
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    scores = jnp.where(causal, scores, -1e30)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs.astype(value.dtype), value,
                     preferred_element_type=jnp.float32)
    return out.astype(query.dtype)              # [B,S,Hq,D]
