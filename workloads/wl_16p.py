"""16p Mamba-2 SSD: state-space duality in its quadratic (attention-like) form, 64 heads x 64.

From JAXBench `benchmark/16p_Mamba2_SSD/baseline.py` (Dao & Gu 2024, Mamba-2-2.7B sizes; C, B
and x of the paper are query, key, value). A_log [B,H,S] stays float32 (FLOAT32_INPUTS), as in
JAXBench. Per (batch, head), all in float32:
  a = sigmoid(A_log), c = cumsum(log(a + 1e-8)) over the sequence,
  L[i,j] = exp(c[i] - c[j]) for j <= i, else 0,
  M = (q k^T) * L,  n_i = sum_j M[i,j] (replaced by 1 where |n_i| < 1e-6),
  M = M / max(|n_i|, 1),
  out = M.astype(bf16) @ v   (float32 accumulation, bf16 output).
d_state and d_model are descriptive only (the state size is the head_dim of q and k).
Tolerance from MaxKernel `jaxbench_adapted_dataset/16p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "16p"
NAME = "Mamba2_SSD"

CONFIG = {
    "name": "mamba2_2_7b_ssd",
    "model": "Mamba-2-2.7B",
    "operator": "state_space_duality",
    "batch": 4,
    "seq_len": 4096,
    "num_heads": 64,
    "head_dim": 64,
    "d_state": 128,
    "d_model": 2560,
}

# query, key, value [1,8,1024,64], A_log [1,8,1024] (A_log's head dim must stay a multiple of 8).
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "num_heads": 8}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block "
              "1), so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_heads": ("a head axis: attention kernels step through it one head at a time (block "
                  "1), so its power of two never meets a block shape; all 64 would make "
                  "every interpret-mode run 8x longer."),
}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 28.2603

# (q k^T) and (M v), each 2*B*H*S*S*D, dense; XLA's cost_analysis (the JSON's figure) adds the
# decay-matrix and normalisation elementwise ops: +3.5%.
FLOPS = (4 * CONFIG["batch"] * CONFIG["num_heads"] * CONFIG["seq_len"] ** 2
         * CONFIG["head_dim"])

# create_inputs()[3] (A_log) is float32 on purpose.
FLOAT32_INPUTS = (3,)


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (query, key, value [B,H,S,D] ~ normal in dtype, A_log [B,H,S] ~ normal*0.5 - 4
    in float32)."""
    key_q, key_k, key_v, key_a = jax.random.split(jax.random.key(seed), 4)
    B, H, S, D = config["batch"], config["num_heads"], config["seq_len"], config["head_dim"]
    query = jax.random.normal(key_q, (B, H, S, D), dtype=dtype)
    key = jax.random.normal(key_k, (B, H, S, D), dtype=dtype)
    value = jax.random.normal(key_v, (B, H, S, D), dtype=dtype)
    A_log = jax.random.normal(key_a, (B, H, S), dtype=jnp.float32) * 0.5 - 4.0
    return query, key, value, A_log


def workload(query, key, value, A_log):
    """y = normalise((C B^T) * L) x with the selective causal decay L (see module docstring)."""
    S = query.shape[2]
    log_a = jnp.log(jax.nn.sigmoid(A_log.astype(jnp.float32)) + 1e-8)         # [B,H,S]
    cum = jnp.cumsum(log_a, axis=-1)
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    L = jnp.exp(jnp.where(causal, cum[..., :, None] - cum[..., None, :], -1e30))  # [B,H,S,S]

    scores = jnp.einsum("bhsd,bhtd->bhst", query.astype(jnp.float32), key.astype(jnp.float32))
    scores = scores * L
    row_sum = jnp.sum(scores, axis=-1, keepdims=True)
    row_sum = jnp.where(jnp.abs(row_sum) < 1e-6, 1.0, row_sum)
    scores = scores / jnp.maximum(jnp.abs(row_sum), 1.0)
    out = jnp.einsum("bhst,bhtd->bhsd", scores.astype(query.dtype), value,
                     preferred_element_type=jnp.float32)
    return out.astype(query.dtype)                                             # [B,H,S,D]
