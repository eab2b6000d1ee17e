"""15p RetNet retention: multi-scale retention of RetNet-6.7B (parallel form), 16 heads x 256.

From JAXBench `benchmark/15p_RetNet_Retention/baseline.py` (Sun et al. 2023), including its fix
that clamps the decay exponent at 0 above the diagonal (gamma^(i-j) overflowed to inf there and
inf*0 gave NaN). Per head h, gamma_h = 1 - 2^(-5-h), and
  R = (q k^T) * D,  D[i,j] = gamma_h^(i-j) for j <= i, else 0   (float32, inputs upcast),
  R = R / max(sum_j |R[i,j]|, 1)                                  (per query row),
  out = R.astype(bf16) @ v                                        (float32 accumulation).
No softmax and no 1/sqrt(D) scaling, as in JAXBench. Tolerance from MaxKernel
`jaxbench_adapted_dataset/15p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "15p"
NAME = "RetNet_Retention"

CONFIG = {
    "name": "retnet_6_7b_retention",
    "model": "RetNet-6.7B",
    "operator": "multi_scale_retention",
    "batch": 4,
    "seq_len": 4096,
    "num_heads": 16,
    "head_dim": 256,
    "d_model": 4096,
}

# query, key, value [1,2,1024,256] (heads 0 and 1, gamma = 1-2^-5 and 1-2^-6).
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "num_heads": 2, "d_model": 512}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_heads": ("a head axis: attention kernels step through it one head at a time (block "
                  "1), so its power of two never meets a block shape; all 16 would make "
                  "every interpret-mode run 8x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 12.2

# QK^T and RV, each 2*B*H*S*S*D, dense; XLA's cost_analysis (the JSON's figure) adds the
# decay/normalisation elementwise ops: +0.6%.
FLOPS = (4 * CONFIG["batch"] * CONFIG["num_heads"] * CONFIG["seq_len"] ** 2
         * CONFIG["head_dim"])


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (query, key, value), each [B,H,S,D] ~ normal."""
    key_q, key_k, key_v = jax.random.split(jax.random.key(seed), 3)
    shape = (config["batch"], config["num_heads"], config["seq_len"], config["head_dim"])
    query = jax.random.normal(key_q, shape, dtype=dtype)
    key = jax.random.normal(key_k, shape, dtype=dtype)
    value = jax.random.normal(key_v, shape, dtype=dtype)
    return query, key, value


def workload(query, key, value):
    """Causal retention with per-head exponential decay and per-row |.|-sum normalisation."""
    B, H, S, D = query.shape
    gammas = 1.0 - jnp.exp2(-5.0 - jnp.arange(H, dtype=jnp.float32))          # [H]
    positions = jnp.arange(S, dtype=jnp.float32)
    distance = positions[:, None] - positions[None, :]                         # i - j
    decay = jnp.exp(jnp.log(gammas)[:, None, None] * jnp.maximum(distance, 0.0))
    decay = jnp.where(distance >= 0, decay, 0.0)                               # [H,S,S]

    qk = jnp.einsum("bhsd,bhtd->bhst", query.astype(jnp.float32), key.astype(jnp.float32))
    qk = qk * decay[None]
    qk = qk / jnp.maximum(jnp.sum(jnp.abs(qk), axis=-1, keepdims=True), 1.0)
    out = jnp.einsum("bhst,bhtd->bhsd", qk.astype(query.dtype), value,
                     preferred_element_type=jnp.float32)
    return out.astype(query.dtype)                                             # [B,H,S,D]
