"""4p Sparse (splash) attention baseline: Llama-3.1-70B causal GQA, 64 query heads, 8 KV heads.

From JAXBench `benchmark/4p_Sparse_Attention/baseline.py` (MaxText
`kernels/attention/splash_attention_kernel.py`; the hand-tuned reference is JAX Pallas splash
attention with a causal mask). Layout is [B,H,S,D]. The inputs carry their own scaling, as in
JAXBench: q is pre-multiplied by 1/sqrt(D) and k, v are normal*0.02, so the workload applies no
softmax scale. Query head h reads KV head h // (Hq/Hkv); query i attends to keys 0..i.
The batch dimension follows accelerator-agents, which added it (vmap over batch); aryatschand's
baseline had no batch dim (q [64,4096,128]), so the published FLOPs and results.csv output shape
[64,4096,128] are for one batch element. Scores and softmax are float32 (JAXBench: bf16).
Tolerance from MaxKernel `jaxbench_adapted_dataset/4p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "4p"
NAME = "Sparse_Attention"

CONFIG = {
    "name": "llama3_70b_sparse_attention",
    "model": "Llama-3.1-70B",
    "operator": "sparse_attention",
    "batch": 4,
    "seq_len": 4096,
    "num_query_heads": 64,
    "num_kv_heads": 8,
    "head_dim": 128,
}

# q [2,4,1024,128], k/v [2,2,1024,128] (2 query heads per KV head).
CPU_CONFIG = {**CONFIG, "batch": 2, "seq_len": 1024, "num_query_heads": 4, "num_kv_heads": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 2x longer."),
    "num_query_heads": ("a head axis: attention kernels step through it one head at a time "
                        "(block 1), so its power of two never meets a block shape; all 64 "
                        "would make every interpret-mode run 16x longer."),
    "num_kv_heads": ("a head axis: attention kernels step through it one head at a time "
                     "(block 1), so its power of two never meets a block shape; all 8 would "
                     "make every interpret-mode run 4x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 5.6623

# QK^T and PV, each 2*B*Hq*S*S*D, dense (the baseline computes the masked half too).
FLOPS = (4 * CONFIG["batch"] * CONFIG["num_query_heads"] * CONFIG["seq_len"] ** 2
         * CONFIG["head_dim"])
FLOPS_NOTE = ("The published figure (5.58e11, XLA cost_analysis) is aryatschand's baseline, "
              "which had no batch dim (one batch element); FLOPS counts all 4 (4x, and the "
              "published BASELINE_MS_V6E is likewise for batch 1).")

# results.csv lists (64, 4096, 128): the same batch-less baseline. This one keeps the batch.
FULL_OUTPUT_SHAPE = (4, 64, 4096, 128)
OUTPUT_SHAPE_NOTE = ("results.csv's (64, 4096, 128) is aryatschand's batch-less baseline; the "
                     "inputs (and accelerator-agents' fixed baseline) have batch 4.")


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (q [B,Hq,S,D] ~ normal/sqrt(D), k, v [B,Hkv,S,D] ~ normal*0.02)."""
    key_q, key_k, key_v = jax.random.split(jax.random.key(seed), 3)
    B, S, D = config["batch"], config["seq_len"], config["head_dim"]
    Hq, Hkv = config["num_query_heads"], config["num_kv_heads"]
    q = jax.random.normal(key_q, (B, Hq, S, D), dtype=dtype) * (D ** -0.5)
    k = jax.random.normal(key_k, (B, Hkv, S, D), dtype=dtype) * 0.02
    v = jax.random.normal(key_v, (B, Hkv, S, D), dtype=dtype) * 0.02
    return q, k, v


def workload(q, k, v):
    """Causal GQA softmax(q k^T) v (no extra scale: q is pre-scaled), float32 softmax."""
    B, Hq, S, D = q.shape
    group = Hq // k.shape[1]
    k = jnp.repeat(k, group, axis=1)            # [B,Hq,S,D]
    v = jnp.repeat(v, group, axis=1)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k, preferred_element_type=jnp.float32)
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    scores = jnp.where(causal, scores, -1e30)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", probs.astype(v.dtype), v,
                     preferred_element_type=jnp.float32)
    return out.astype(q.dtype)                  # [B,Hq,S,D]
